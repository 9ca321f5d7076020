package site_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/site"
)

const (
	firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
	ahrefsUA  = "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"
)

// holder is a handler whose /hold requests wait until released, so a test
// can keep exactly n requests in flight.
type holder struct {
	started chan struct{}
	release chan struct{}
	clock   *clock // if set, /slow advances it by ?ms=
}

func newHolder() *holder {
	return &holder{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (h *holder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/hold":
		h.started <- struct{}{}
		<-h.release
	case "/slow":
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		h.clock.Advance(time.Duration(ms) * time.Millisecond)
	}
	io.WriteString(w, "ok\n")
}

// hold starts n requests to /hold and returns when all are in the handler.
func (h *holder) hold(handler http.Handler, n int, wg *sync.WaitGroup) {
	for range n {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/hold", nil)
			r.Header.Set("User-Agent", firefoxUA)
			handler.ServeHTTP(httptest.NewRecorder(), r)
		})
	}
	for range n {
		<-h.started
	}
}

func serve(h http.Handler, method, path, ua string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	if ua != "" {
		r.Header.Set("User-Agent", ua)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestLoadShedderInFlight(t *testing.T) {
	app := newHolder()
	s := &site.LoadShedder{MaxInFlight: 2, MaxLatency: -1}
	h := s.Handler(app)
	var wg sync.WaitGroup
	defer wg.Wait()

	if w := serve(h, "GET", "/", googlebotUA); w.Code != 200 {
		t.Fatalf("crawler, no load: %d", w.Code)
	}
	app.hold(h, 2, &wg)

	w := serve(h, "GET", "/", googlebotUA)
	if w.Code != 503 {
		t.Fatalf("crawler under load: %d, want 503", w.Code)
	}
	if got := w.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q at the threshold, want 1", got)
	}
	if w.Header().Get("Cache-Control") != "no-store" || !strings.Contains(w.Body.String(), "retry in 1 seconds") {
		t.Errorf("503: Cache-Control %q, body %q", w.Header().Get("Cache-Control"), w.Body)
	}
	if w := serve(h, "HEAD", "/", googlebotUA); w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("crawler's HEAD under load: %d", w.Code)
	}
	for _, ua := range []string{firefoxUA, chromeUA, ""} {
		if w := serve(h, "GET", "/", ua); w.Code != 200 {
			t.Errorf("person %q under load: %d, want 200", ua, w.Code)
		}
	}
	// A bot that is not a known crawler is shed only with Who: ShedBots.
	if w := serve(h, "GET", "/", ahrefsUA); w.Code != 200 {
		t.Errorf("AhrefsBot with Who: ShedCrawlers: %d, want 200", w.Code)
	}
	if w := serve((&site.LoadShedder{MaxInFlight: 1, MaxLatency: -1, Who: site.ShedBots}).Handler(h), "GET", "/", ahrefsUA); w.Code != 200 {
		t.Errorf("AhrefsBot with Who: ShedBots, its own shedder idle: %d, want 200", w.Code)
	}
	st := s.Stats()
	if st.InFlight != 2 || st.Shed != 2 || st.Load != 1 {
		t.Errorf("Stats %+v, want 2 in flight, 2 shed, load 1", st)
	}

	// The load drops: crawlers are served again.
	close(app.release)
	wg.Wait()
	if w := serve(h, "GET", "/", googlebotUA); w.Code != 200 {
		t.Errorf("crawler after the load dropped: %d, want 200", w.Code)
	}
	if st := s.Stats(); st.InFlight != 0 || st.Load != 0 {
		t.Errorf("Stats after: %+v", st)
	}
}

func TestLoadShedderBots(t *testing.T) {
	app := newHolder()
	h := (&site.LoadShedder{MaxInFlight: 1, MaxLatency: -1, Who: site.ShedBots}).Handler(app)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(app.release)
	app.hold(h, 1, &wg)
	bots := []string{
		googlebotUA, bingbotUA, ahrefsUA,
		"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
		"crawler4j (https://github.com/yasserg/crawler4j/)",
		"MJ12bot/v1.4.8",
	}
	for _, ua := range bots {
		if w := serve(h, "GET", "/", ua); w.Code != 503 {
			t.Errorf("bot %q under load: %d, want 503", ua, w.Code)
		}
	}
	people := []string{
		chromeUA, firefoxUA, "",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87",
		"Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
		// A phone whose model ends in "bot".
		"Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.165 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0",
		"Mozilla/5.0 (Windows NT 10.0; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/86.0.4240.198 Safari/537.36 SE 2.X MetaSr 1.0 SogouMobileBrowser/5.0",
	}
	for _, ua := range people {
		if w := serve(h, "GET", "/", ua); w.Code != 200 {
			t.Errorf("person %q under load: %d, want 200", ua, w.Code)
		}
	}
}

// Retry-After doubles for each quarter of overload, within 1 s and 1 h.
func TestLoadShedderRetryAfterGrows(t *testing.T) {
	app := newHolder()
	s := &site.LoadShedder{MaxInFlight: 4, MaxLatency: -1}
	h := s.Handler(app)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(app.release)
	held := 0
	for _, tt := range []struct {
		inFlight int
		want     string
	}{
		{4, "1"},     // load 1
		{5, "2"},     // 1.25
		{6, "4"},     // 1.5
		{8, "16"},    // 2
		{12, "256"},  // 3
		{16, "3600"}, // 4: 4096 s, capped
		{24, "3600"},
	} {
		app.hold(h, tt.inFlight-held, &wg)
		held = tt.inFlight
		w := serve(h, "GET", "/", googlebotUA)
		if w.Code != 503 || w.Header().Get("Retry-After") != tt.want {
			t.Errorf("%d in flight: %d Retry-After %q, want 503 and %s", tt.inFlight, w.Code, w.Header().Get("Retry-After"), tt.want)
		}
	}

	// Other bounds.
	s2 := &site.LoadShedder{MaxInFlight: 1, MaxLatency: -1, MinRetryAfter: 30 * time.Second, MaxRetryAfter: 2 * time.Minute}
	app2 := newHolder()
	h2 := s2.Handler(app2)
	defer close(app2.release)
	app2.hold(h2, 1, &wg)
	if got := serve(h2, "GET", "/", googlebotUA).Header().Get("Retry-After"); got != "30" {
		t.Errorf("Retry-After %q with MinRetryAfter 30s, want 30", got)
	}
	app2.hold(h2, 3, &wg)
	if got := serve(h2, "GET", "/", googlebotUA).Header().Get("Retry-After"); got != "120" {
		t.Errorf("Retry-After %q with MaxRetryAfter 2m, want 120", got)
	}
}

// Slow answers make an overload too, measured over the window: the clock
// moves only when the test says.
func TestLoadShedderLatency(t *testing.T) {
	clk := newClock()
	app := newHolder()
	app.clock = clk
	s := &site.LoadShedder{MaxLatency: 100 * time.Millisecond, Window: 10 * time.Second, Now: clk.Now}
	h := s.Handler(app)

	// Four slow answers are too few to judge by.
	for range 4 {
		serve(h, "GET", "/slow?ms=300", firefoxUA)
	}
	if w := serve(h, "GET", "/", googlebotUA); w.Code != 200 {
		t.Fatalf("crawler after 4 slow answers: %d, want 200", w.Code)
	}
	serve(h, "GET", "/slow?ms=300", firefoxUA)
	// 5 of 6 answers took 300 ms: the 90th percentile did.
	w := serve(h, "GET", "/", googlebotUA)
	if w.Code != 503 {
		t.Fatalf("crawler while answers are slow: %d, want 503 (%+v)", w.Code, s.Stats())
	}
	slowRA, _ := strconv.Atoi(w.Header().Get("Retry-After"))
	if st := s.Stats(); st.P90 < 300*time.Millisecond || st.P90 > 400*time.Millisecond || st.Load <= 1 {
		t.Errorf("Stats %+v: want a p90 near 300ms", st)
	}
	if w := serve(h, "GET", "/", chromeUA); w.Code != 200 {
		t.Errorf("person while answers are slow: %d, want 200", w.Code)
	}

	// Slower still: a longer Retry-After.
	for range 20 {
		serve(h, "GET", "/slow?ms=600", firefoxUA)
	}
	w = serve(h, "GET", "/", googlebotUA)
	slowerRA, _ := strconv.Atoi(w.Header().Get("Retry-After"))
	if w.Code != 503 || slowerRA <= slowRA || slowerRA > 3600 {
		t.Errorf("Retry-After %d at 300 ms, %d at 600 ms: want it to grow, within an hour", slowRA, slowerRA)
	}

	// The window passes with nothing slow in it: crawlers are welcome.
	clk.Advance(10 * time.Second)
	if w := serve(h, "GET", "/", googlebotUA); w.Code != 200 {
		t.Errorf("crawler after the window: %d, want 200 (%+v)", w.Code, s.Stats())
	}
	// Fast answers outweigh a few slow ones.
	for range 30 {
		serve(h, "GET", "/", firefoxUA)
	}
	serve(h, "GET", "/slow?ms=900", firefoxUA)
	if w := serve(h, "GET", "/", googlebotUA); w.Code != 200 {
		t.Errorf("crawler after one slow answer among 30: %d, want 200 (%+v)", w.Code, s.Stats())
	}
}

// Many people and crawlers at once, over HTTP: people always get their
// page, crawlers their page or a 503 with Retry-After. Run with -race.
func TestLoadShedderConcurrent(t *testing.T) {
	s := &site.LoadShedder{MaxInFlight: 4, MaxLatency: -1}
	srv := httptest.NewServer(s.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // long enough to overlap
		io.WriteString(w, "page\n")
	})))
	defer srv.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := range 64 {
		wg.Go(func() {
			ua := chromeUA
			if i%2 == 0 {
				ua = googlebotUA
			}
			for range 10 {
				req, _ := http.NewRequest("GET", srv.URL, nil)
				req.Header.Set("User-Agent", ua)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				key := "crawler " + resp.Status
				if ua == chromeUA {
					key = "person " + resp.Status
					if resp.StatusCode != 200 {
						t.Errorf("person got %s", resp.Status)
					}
				} else if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				} else if resp.StatusCode != 200 && resp.StatusCode != 503 {
					t.Errorf("crawler got %s", resp.Status)
				}
				mu.Lock()
				counts[key]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("answers: %v; %+v", counts, s.Stats())
	if st := s.Stats(); st.InFlight != 0 || st.Shed != uint64(counts["crawler 503 Service Unavailable"]) {
		t.Errorf("Stats %+v after all requests, counts %v", st, counts)
	}
}

func TestDefaultBotPattern(t *testing.T) {
	for ua, want := range map[string]bool{
		googlebotUA:                            true,
		"Googlebot-Image/1.0":                  true,
		"Twitterbot/1.0":                       true,
		"Mozilla/5.0 (compatible; DotBot/1.2)": true,
		"Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)": true,
		"Sogou web spider/4.0":                       true,
		"Mozilla/5.0 (compatible; Yahoo! Slurp)":     true,
		"heritrix/3.4 (+http://example.org/crawler)": true,
		"bot":     true,
		chromeUA:  false,
		firefoxUA: false,
		"Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0 Mobile Safari/537.36": false,
		"curl/8.5.0": false,
		"":           false,
	} {
		if got := site.DefaultBotPattern.MatchString(ua); got != want {
			t.Errorf("DefaultBotPattern.MatchString(%q) = %v, want %v", ua, got, want)
		}
	}
}
