package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// scrape GETs the handler and parses the text it serves.
func scrape(t testing.TB, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q, want the Prometheus text format", ct)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	return fams
}

type labels map[string]string

func matches(m *dto.Metric, want labels) bool {
	if len(m.GetLabel()) != len(want) {
		return false
	}
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; !ok || v != lp.GetValue() {
			return false
		}
	}
	return true
}

// series returns the one series of family name with exactly these labels.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, want labels) *dto.Metric {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	for _, m := range fam.GetMetric() {
		if matches(m, want) {
			return m
		}
	}
	t.Fatalf("%s: no series %v; have %s", name, want, describe(fam))
	return nil
}

func describe(fam *dto.MetricFamily) string {
	var s []string
	for _, m := range fam.GetMetric() {
		var l []string
		for _, lp := range m.GetLabel() {
			l = append(l, lp.GetName()+"="+lp.GetValue())
		}
		s = append(s, "{"+strings.Join(l, ",")+"}")
	}
	return strings.Join(s, " ")
}

// value is the value of a counter or gauge series.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want labels) float64 {
	t.Helper()
	m := series(t, fams, name, want)
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s%v is neither a counter nor a gauge", name, want)
	return 0
}

func checkValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, want labels, v float64) {
	t.Helper()
	if got := value(t, fams, name, want); got != v {
		t.Errorf("%s%v = %v, want %v", name, want, got, v)
	}
}

// checkSeries checks that family name has exactly the series listed, with
// these values (counters and gauges).
func checkSeries(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]float64) {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no family %s", name)
	}
	got := map[string]float64{}
	for _, m := range fam.GetMetric() {
		var l []string
		for _, lp := range m.GetLabel() {
			l = append(l, lp.GetName()+"="+lp.GetValue())
		}
		sort.Strings(l)
		v := m.GetCounter().GetValue()
		if m.Gauge != nil {
			v = m.Gauge.GetValue()
		}
		got[strings.Join(l, ",")] = v
	}
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s{%s}: missing", name, k)
		} else if g != v {
			t.Errorf("%s{%s} = %v, want %v", name, k, g, v)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s{%s} = %v: not expected", name, k, g)
		}
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestRequests(t *testing.T) {
	m := New(10)
	a, b := "http://a.example:80", "https://b.example:443"
	recs := []reqlog.Record{
		// Three compressed HTML pages, 1,000 bytes on the wire, 3,000 decoded.
		{Kind: "page", Purpose: "discovery", Status: 200, Type: "html", TTFB: ms(40), Duration: ms(120), Wire: 1000, Body: 3000, Compressed: true, Host: a},
		{Kind: "page", Purpose: "discovery", Status: 200, Type: "html", TTFB: ms(40), Duration: ms(120), Wire: 1000, Body: 3000, Compressed: true, Host: a},
		{Kind: "page", Purpose: "discovery", Status: 200, Type: "html", TTFB: ms(40), Duration: ms(120), Wire: 1000, Body: 3000, Compressed: true, Host: b},
		// A refresh answered 304, sparing 5,000 bytes.
		{Kind: "page", Purpose: "refresh", Status: 304, TTFB: ms(30), Duration: ms(30), Wire: 200, Saved: 5000, Conditional: true, Host: a},
		// A refresh answered in full.
		{Kind: "page", Purpose: "refresh", Status: 200, Type: "html", TTFB: ms(30), Duration: ms(70), Wire: 4000, Body: 3800, Conditional: true, Host: a},
		// A compressed answer larger on the wire than decoded spares nothing.
		{Kind: "page", Purpose: "discovery", Status: 200, Type: "image", TTFB: ms(10), Duration: ms(20), Wire: 600, Body: 500, Compressed: true, Host: b},
		{Kind: "robots", Status: 404, Type: "other", TTFB: ms(5), Duration: ms(6), Wire: 300, Body: 100, Host: b},
		// A conditional sitemap request that timed out.
		{Kind: "sitemap", Error: "timeout", Duration: 30 * time.Second, Conditional: true, Host: b},
		{Kind: "page", Purpose: "discovery", Error: "dns", Duration: ms(3), Host: "http://gone.example:80"},
		{Kind: "page", Purpose: "discovery", Duration: ms(1), Host: b}, // no answer, no error kind
		// Values outside the expected sets.
		{Kind: "ftp", Purpose: "whim", Status: 999, Type: "video", TTFB: ms(1), Duration: ms(2), Wire: 10, Body: 10, Host: b},
		{Kind: "page", Purpose: "discovery", Status: 42, Type: "html", TTFB: ms(1), Duration: ms(2), Wire: 10, Body: 10, Host: b},
	}
	for i := range recs {
		m.Request(&recs[i])
	}
	f := scrape(t, m)

	checkSeries(t, f, "gentlecrawl_requests_total", map[string]float64{
		"code=200,kind=page,purpose=discovery,type=html":   3,
		"code=304,kind=page,purpose=refresh,type=none":     1,
		"code=200,kind=page,purpose=refresh,type=html":     1,
		"code=200,kind=page,purpose=discovery,type=image":  1,
		"code=404,kind=robots,purpose=none,type=other":     1,
		"code=none,kind=sitemap,purpose=none,type=none":    1,
		"code=none,kind=page,purpose=discovery,type=none":  2,
		"code=other,kind=other,purpose=other,type=other":   1,
		"code=other,kind=page,purpose=discovery,type=html": 1,
	})
	checkSeries(t, f, "gentlecrawl_request_errors_total", map[string]float64{
		"error=timeout,kind=sitemap": 1,
		"error=dns,kind=page":        1,
		"error=unknown,kind=page":    1,
	})

	// Response times: every request in the duration histogram, only the
	// answered ones in the TTFB and size histograms.
	hist := func(name, kind string) *dto.Histogram {
		t.Helper()
		h := series(t, f, name, labels{"kind": kind}).GetHistogram()
		if h == nil {
			t.Fatalf("%s{kind=%s} is not a histogram", name, kind)
		}
		return h
	}
	for _, c := range []struct {
		name                          string
		page, robots, sitemap, others uint64
	}{
		{"gentlecrawl_response_duration_seconds", 9, 1, 1, 1},
		{"gentlecrawl_response_ttfb_seconds", 7, 1, 0, 1},
		{"gentlecrawl_response_size_bytes", 7, 1, 0, 1},
	} {
		for kind, n := range map[string]uint64{"page": c.page, "robots": c.robots, "sitemap": c.sitemap, "other": c.others} {
			if got := hist(c.name, kind).GetSampleCount(); got != n {
				t.Errorf("%s{kind=%s} count %d, want %d", c.name, kind, got, n)
			}
		}
	}
	// Buckets are cumulative. Of the page requests, those of 1, 2 and 3 ms
	// are within 5 ms; with those of 20 and 30 ms, five are within 50 ms;
	// with the one of 70 ms, six within 100 ms; all nine within 250 ms.
	buckets := map[float64]uint64{}
	for _, bk := range hist("gentlecrawl_response_duration_seconds", "page").GetBucket() {
		buckets[bk.GetUpperBound()] = bk.GetCumulativeCount()
	}
	for le, n := range map[float64]uint64{0.005: 3, 0.05: 5, 0.1: 6, 0.25: 9, 60: 9} {
		if buckets[le] != n {
			t.Errorf("duration{kind=page} bucket le=%v: %d, want %d", le, buckets[le], n)
		}
	}
	if got := hist("gentlecrawl_response_duration_seconds", "sitemap").GetSampleSum(); got != 30 {
		t.Errorf("duration{kind=sitemap} sum %v, want 30", got)
	}
	// Page sizes: 200 and 10 bytes ≤ 256, 600 and 1,000 (×3) ≤ 1 KiB,
	// 4,000 ≤ 4 KiB.
	buckets = map[float64]uint64{}
	for _, bk := range hist("gentlecrawl_response_size_bytes", "page").GetBucket() {
		buckets[bk.GetUpperBound()] = bk.GetCumulativeCount()
	}
	for le, n := range map[float64]uint64{256: 2, 1024: 6, 4096: 7, 64 << 20: 7} {
		if buckets[le] != n {
			t.Errorf("size{kind=page} bucket le=%v: %d, want %d", le, buckets[le], n)
		}
	}

	checkSeries(t, f, "gentlecrawl_received_bytes_total", map[string]float64{
		"form=wire":    3*1000 + 200 + 4000 + 600 + 300 + 10 + 10,
		"form=decoded": 3*3000 + 3800 + 500 + 100 + 10 + 10,
	})
	checkSeries(t, f, "gentlecrawl_saved_bytes_total", map[string]float64{
		"by=not_modified": 5000,
		"by=compression":  3 * 2000,
	})
	checkSeries(t, f, "gentlecrawl_conditional_requests_total", map[string]float64{
		"result=not_modified": 1,
		"result=full":         1,
		"result=none":         1,
	})
	checkSeries(t, f, "gentlecrawl_host_requests_total", map[string]float64{
		"code=200,host=" + a:                    3,
		"code=304,host=" + a:                    1,
		"code=200,host=" + b:                    2,
		"code=404,host=" + b:                    1,
		"code=none,host=" + b:                   2,
		"code=other,host=" + b:                  2,
		"code=none,host=http://gone.example:80": 1,
	})
	s := series(t, f, "gentlecrawl_host_response_duration_seconds", labels{"host": a}).GetSummary()
	if s.GetSampleCount() != 4 || s.GetSampleSum() != 0.12+0.12+0.03+0.07 {
		t.Errorf("host duration {host=%s}: count %d sum %v, want 4 and 0.34", a, s.GetSampleCount(), s.GetSampleSum())
	}
	if len(s.GetQuantile()) != 0 {
		t.Errorf("host duration has quantiles %v: it should be a sum and a count only", s.GetQuantile())
	}

	// Every family has help text, and the runtime collectors are there.
	for name, fam := range f {
		if strings.HasPrefix(name, "gentlecrawl_") && len(fam.GetHelp()) < 20 {
			t.Errorf("%s: help %q", name, fam.GetHelp())
		}
	}
	if _, ok := f["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	if _, ok := f["process_cpu_seconds_total"]; !ok && runtime.GOOS == "linux" {
		t.Error("no process metrics")
	}
}

func TestHostBound(t *testing.T) {
	const bound = 10
	m := New(bound)
	host := func(i int) string { return fmt.Sprintf("https://h%04d.example:443", i) }
	for i := range 1000 {
		m.Request(&reqlog.Record{Kind: "page", Purpose: "discovery", Status: 200, Type: "html", Duration: ms(100), Host: host(i)})
	}
	// The named hosts stay named, and hosts beyond the bound are never
	// promoted later.
	for range 5 {
		m.Request(&reqlog.Record{Kind: "page", Purpose: "refresh", Status: 304, Duration: ms(10), Host: host(3)})
		m.Request(&reqlog.Record{Kind: "page", Purpose: "refresh", Status: 304, Duration: ms(10), Host: host(500)})
	}
	// A host that could not be a label value counts as other too, even
	// before the bound is reached (here, it already is).
	m.Request(&reqlog.Record{Kind: "page", Status: 200, Duration: ms(10), Host: "http://\xff\xfe:80"})
	m.Request(&reqlog.Record{Kind: "page", Status: 200, Duration: ms(10), Host: "other"})

	f := scrape(t, m)
	want := map[string]float64{
		"code=200,host=other":      990 + 2,
		"code=304,host=other":      5,
		"code=304,host=" + host(3): 5,
	}
	for i := range bound {
		want["code=200,host="+host(i)] = 1
	}
	checkSeries(t, f, "gentlecrawl_host_requests_total", want)

	hosts := map[string]bool{}
	for _, name := range []string{"gentlecrawl_host_requests_total", "gentlecrawl_host_response_duration_seconds"} {
		for _, s := range f[name].GetMetric() {
			for _, lp := range s.GetLabel() {
				if lp.GetName() == "host" {
					hosts[lp.GetValue()] = true
				}
			}
		}
	}
	if len(hosts) != bound+1 {
		t.Errorf("%d distinct host label values, want %d", len(hosts), bound+1)
	}
	s := series(t, f, "gentlecrawl_host_response_duration_seconds", labels{"host": "other"}).GetSummary()
	if s.GetSampleCount() != 990+5+2 {
		t.Errorf("host duration {host=other}: count %d, want %d", s.GetSampleCount(), 990+5+2)
	}
}

func TestNoHostLabels(t *testing.T) {
	m := New(0)
	for i := range 50 {
		m.Request(&reqlog.Record{Kind: "page", Status: 200, Duration: ms(10), Host: fmt.Sprintf("http://h%d:80", i)})
	}
	f := scrape(t, m)
	for name := range f {
		if strings.HasPrefix(name, "gentlecrawl_host_") && name != "gentlecrawl_hosts_active" && name != "gentlecrawl_hosts_waiting" {
			t.Errorf("New(0) exposes %s", name)
		}
	}
	checkValue(t, f, "gentlecrawl_requests_total", labels{"kind": "page", "purpose": "none", "code": "200", "type": "none"}, 50)
}

func TestErrorBound(t *testing.T) {
	m := New(0)
	const kinds = maxErrorLabels + 8
	for i := range kinds {
		for range i + 1 {
			m.Request(&reqlog.Record{Kind: "page", Error: fmt.Sprintf("e%02d", i), Duration: ms(1)})
		}
	}
	m.Request(&reqlog.Record{Kind: "robots", Error: "e00", Duration: ms(1)})  // named already: stays named
	m.Request(&reqlog.Record{Kind: "robots", Error: "late", Duration: ms(1)}) // new after the bound: other
	f := scrape(t, m)

	want := map[string]float64{"error=e00,kind=robots": 1, "error=other,kind=robots": 1}
	otherCount := 0
	for i := range kinds {
		if i < maxErrorLabels {
			want[fmt.Sprintf("error=e%02d,kind=page", i)] = float64(i + 1)
		} else {
			otherCount += i + 1
		}
	}
	want["error=other,kind=page"] = float64(otherCount)
	checkSeries(t, f, "gentlecrawl_request_errors_total", want)

	errs := map[string]bool{}
	for _, s := range f["gentlecrawl_request_errors_total"].GetMetric() {
		for _, lp := range s.GetLabel() {
			if lp.GetName() == "error" {
				errs[lp.GetValue()] = true
			}
		}
	}
	if len(errs) != maxErrorLabels+1 {
		t.Errorf("%d distinct error label values, want %d", len(errs), maxErrorLabels+1)
	}
}

func TestProgress(t *testing.T) {
	m := New(0)
	// Before any progress, every reason the crawler gives is a series at
	// 0: a scrape finds the metric whenever it comes.
	f := scrape(t, m)
	checkSeries(t, f, "gentlecrawl_hosts_waiting", map[string]float64{"reason=delay": 0, "reason=rate": 0,
		"reason=backoff": 0, "reason=robots": 0, "reason=address": 0})
	m.Progress(Progress{Queued: 1200, Active: 7, Requests: 99, Waiting: map[string]int{"delay": 3, "rate": 2}})
	f = scrape(t, m)
	checkValue(t, f, "gentlecrawl_queued_urls", nil, 1200)
	checkValue(t, f, "gentlecrawl_hosts_active", nil, 7)
	checkSeries(t, f, "gentlecrawl_hosts_waiting", map[string]float64{"reason=delay": 3, "reason=rate": 2,
		"reason=backoff": 0, "reason=robots": 0, "reason=address": 0})

	m.Progress(Progress{Queued: 40, Active: 2, Waiting: map[string]int{"backoff": 1, "rate": 5}})
	f = scrape(t, m)
	checkValue(t, f, "gentlecrawl_queued_urls", nil, 40)
	checkValue(t, f, "gentlecrawl_hosts_active", nil, 2)
	checkSeries(t, f, "gentlecrawl_hosts_waiting", map[string]float64{"reason=delay": 0, "reason=rate": 5, "reason=backoff": 1,
		"reason=robots": 0, "reason=address": 0})

	m.Progress(Progress{})
	f = scrape(t, m)
	checkValue(t, f, "gentlecrawl_queued_urls", nil, 0)
	checkSeries(t, f, "gentlecrawl_hosts_waiting", map[string]float64{"reason=delay": 0, "reason=rate": 0, "reason=backoff": 0,
		"reason=robots": 0, "reason=address": 0})

	// Reasons beyond the bound are summed under other.
	w := map[string]int{}
	for i := range maxWaitLabels + 4 {
		w[fmt.Sprintf("r%02d", i)] = 1
	}
	m.Progress(Progress{Waiting: w})
	f = scrape(t, m)
	if n := len(f["gentlecrawl_hosts_waiting"].GetMetric()); n != maxWaitLabels+1 {
		t.Errorf("%d waiting reasons, want %d", n, maxWaitLabels+1)
	}
	sum := 0.0
	for _, s := range f["gentlecrawl_hosts_waiting"].GetMetric() {
		sum += s.GetGauge().GetValue()
	}
	if sum != maxWaitLabels+4 {
		t.Errorf("hosts waiting add up to %v, want %d", sum, maxWaitLabels+4)
	}
}

// Two crawls in one program each have their own registry: the second New
// would panic on the default registry.
func TestPrivateRegistry(t *testing.T) {
	m1, m2 := New(1), New(1)
	m1.Request(&reqlog.Record{Kind: "page", Status: 200, Duration: ms(1), Host: "http://x:80"})
	checkValue(t, scrape(t, m1), "gentlecrawl_requests_total", labels{"kind": "page", "purpose": "none", "code": "200", "type": "none"}, 1)
	if _, ok := scrape(t, m2)["gentlecrawl_requests_total"]; ok {
		t.Error("the second crawl's metrics count the first one's request")
	}
}

func TestConcurrent(t *testing.T) {
	const (
		workers = 8
		each    = 3000
		bound   = 5
		hosts   = 40
	)
	m := New(bound)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := reqlog.Record{Kind: "page", Purpose: "discovery", Duration: ms(i % 50), Host: fmt.Sprintf("http://h%d:80", (w+i)%hosts)}
				switch i % 3 {
				case 0:
					r.Status, r.Type, r.Wire = 200, "html", 100
				case 1:
					r.Status, r.Conditional, r.Saved, r.Wire = 304, true, 7, 50
				default:
					r.Error = fmt.Sprintf("e%d", i%50) // more kinds than named
				}
				m.Request(&r)
				if i%500 == 0 {
					m.Progress(Progress{Queued: i, Waiting: map[string]int{"delay": w}})
				}
			}
		}()
	}
	wg.Wait()
	f := scrape(t, m)
	const n = workers * each
	checkSeries(t, f, "gentlecrawl_requests_total", map[string]float64{
		"code=200,kind=page,purpose=discovery,type=html":  n / 3,
		"code=304,kind=page,purpose=discovery,type=none":  n / 3,
		"code=none,kind=page,purpose=discovery,type=none": n / 3,
	})
	checkValue(t, f, "gentlecrawl_received_bytes_total", labels{"form": "wire"}, n/3*150)
	checkValue(t, f, "gentlecrawl_saved_bytes_total", labels{"by": "not_modified"}, n/3*7)
	checkValue(t, f, "gentlecrawl_conditional_requests_total", labels{"result": "not_modified"}, n/3)

	var errs, hostTotal float64
	errNames := 0
	for _, s := range f["gentlecrawl_request_errors_total"].GetMetric() {
		errs += s.GetCounter().GetValue()
		errNames++
	}
	if errs != n/3 || errNames > maxErrorLabels+1 {
		t.Errorf("errors: %v in %d series, want %d in at most %d", errs, errNames, n/3, maxErrorLabels+1)
	}
	names := map[string]bool{}
	for _, s := range f["gentlecrawl_host_requests_total"].GetMetric() {
		hostTotal += s.GetCounter().GetValue()
		for _, lp := range s.GetLabel() {
			if lp.GetName() == "host" {
				names[lp.GetValue()] = true
			}
		}
	}
	if hostTotal != n || len(names) != bound+1 {
		t.Errorf("host requests: %v under %d hosts, want %d under %d", hostTotal, len(names), n, bound+1)
	}
	if c := series(t, f, "gentlecrawl_response_duration_seconds", labels{"kind": "page"}).GetHistogram().GetSampleCount(); c != n {
		t.Errorf("duration count %d, want %d", c, n)
	}
}

func BenchmarkRequest(b *testing.B) {
	m := New(100)
	recs := make([]reqlog.Record, 64)
	for i := range recs {
		recs[i] = reqlog.Record{
			Kind: "page", Purpose: "discovery", Status: []int{200, 200, 304, 404}[i%4], Type: "html",
			TTFB: ms(20 + i), Duration: ms(50 + i), Wire: 20000, Body: 60000, Compressed: true, Conditional: i%2 == 0,
			Host: fmt.Sprintf("https://h%d.example:443", i%200), URL: "https://example/page",
		}
	}
	recs[7].Status, recs[7].Type, recs[7].Error = 0, "", "timeout"
	for i := range recs {
		m.Request(&recs[i]) // label children created before timing
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.Request(&recs[i%len(recs)])
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				m.Request(&recs[i%len(recs)])
				i++
			}
		})
	})
}
