package site

import "strings"

// Crawler describes a search engine's crawlers: how they name themselves
// in User-Agent, and the DNS domains their addresses resolve into.
type Crawler struct {
	// Name is the crawler's usual name, "Googlebot"; results report it.
	Name string
	// Tokens are substrings of User-Agent, compared case-insensitively,
	// by which a request claims to come from this crawler.
	Tokens []string
	// Domains are the DNS domains the crawler's reverse DNS names end in:
	// a name verifies when it is one of them or under one of them.
	Domains []string
}

// knownCrawlers is the table KnownCrawlers copies. Each entry says where
// its domains come from: the operator's page, or "No source found" where
// only third-party crawler directories give them.
var knownCrawlers = []Crawler{
	{
		// developers.google.com/search/docs/crawling-indexing/verifying-googlebot:
		// common crawlers are crawl-*.googlebot.com or
		// geo-crawl-*.geo.googlebot.com, special-case crawlers (AdsBot)
		// rate-limited-proxy-*.google.com, user-triggered fetchers
		// google-proxy-*.google.com or *.gae.googleusercontent.com. The
		// page says googleusercontent.com; only its gae. subdomain is
		// taken here, because every Google Cloud VM can be given a
		// forward-confirmed name under bc.googleusercontent.com, which
		// would let anyone with a VM pass as Googlebot.
		Name: "Googlebot",
		Tokens: []string{"Googlebot", "AdsBot-Google", "Mediapartners-Google", "Storebot-Google",
			"Google-InspectionTool", "GoogleOther", "APIs-Google", "FeedFetcher-Google",
			"Google-Read-Aloud", "Google-Site-Verification", "Google-Safety"},
		Domains: []string{"googlebot.com", "google.com", "gae.googleusercontent.com"},
	},
	{
		// bing.com/webmaster/help/how-to-verify-bingbot-3905dc26: the
		// name ends with search.msn.com.
		Name:    "Bingbot",
		Tokens:  []string{"bingbot", "msnbot", "BingPreview", "AdIdxBot"},
		Domains: []string{"search.msn.com"},
	},
	{
		// yandex.com/support/webmaster/robot-workings/check-yandex-robots.html:
		// "All Yandex robot names end in yandex.ru, yandex.net or
		// yandex.com."
		Name: "YandexBot",
		Tokens: []string{"YandexBot", "YandexImages", "YandexMobileBot", "YandexAccessibilityBot",
			"YandexRenderResourcesBot", "YandexVideo", "YandexMedia", "YandexNews", "YandexFavicons",
			"YandexMetrika", "YandexWebmaster", "YandexPagechecker"},
		Domains: []string{"yandex.ru", "yandex.net", "yandex.com"},
	},
	{
		// support.apple.com/en-us/119829 (as quoted by crawler
		// directories): reverse DNS in applebot.apple.com.
		Name:    "Applebot",
		Tokens:  []string{"Applebot"},
		Domains: []string{"applebot.apple.com"},
	},
	{
		// No source found: DuckDuckGo documents a list of addresses, not
		// a DNS domain; duckduckgo.com is what crawler directories report.
		Name:    "DuckDuckBot",
		Tokens:  []string{"DuckDuckBot", "DuckDuckGo-Favicons-Bot", "DuckAssistBot"},
		Domains: []string{"duckduckgo.com"},
	},
	{
		// Baidu's spider help (English FAQ, "How can I know the crawling
		// is from Baiduspider?"): "The hostname of Baiduspider is
		// *.baidu.com or *.baidu.jp."
		Name:    "Baiduspider",
		Tokens:  []string{"Baiduspider"},
		Domains: []string{"baidu.com", "baidu.jp"},
	},
	{
		// Yahoo! Search blog, 5 June 2007: "The name of all Yahoo! Search
		// crawlers will end with crawl.yahoo.net".
		Name:    "Yahoo! Slurp",
		Tokens:  []string{"Slurp"},
		Domains: []string{"crawl.yahoo.net"},
	},
	{
		// No source found: Sogou's help page is gone; its spiders are
		// seen from sogouspider-*.crawl.sogou.com. The tokens name the
		// spiders, not Sogou's browser, whose User-Agent says Sogou too.
		Name: "Sogou",
		Tokens: []string{"Sogou web spider", "Sogou inst spider", "Sogou News Spider",
			"Sogou Pic Spider", "Sogou Video Spider", "Sogou spider"},
		Domains: []string{"sogou.com"},
	},
	{
		// napoveda.seznam.cz/en/seznambot-crawler: PTR records like
		// fulltextrobot-77-75-77-xxx.seznam.cz.
		Name:    "SeznamBot",
		Tokens:  []string{"SeznamBot"},
		Domains: []string{"seznam.cz"},
	},
	{
		// No source found in English: crawler directories report Naver's
		// Yeti under naver.com.
		Name:    "Yeti",
		Tokens:  []string{"Yeti/"},
		Domains: []string{"naver.com"},
	},
	{
		// help.qwant.com/bot: "a name ending with qwant.com", e.g.
		// qwantbot-1-162-242-91.qwant.com. Older crawlers said Qwantify.
		Name:    "Qwantbot",
		Tokens:  []string{"Qwantbot", "Qwantify"},
		Domains: []string{"qwant.com"},
	},
	{
		// Partly sourced: Huawei's PetalBot page (aspiegel.com/petalbot)
		// describes DNS verification, but its text was not available in
		// full; crawler directories report petalbot-*.petalsearch.com and
		// names under aspiegel.com, Huawei's former crawling company.
		Name:    "PetalBot",
		Tokens:  []string{"PetalBot", "AspiegelBot"},
		Domains: []string{"petalsearch.com", "aspiegel.com"},
	},
}

// KnownCrawlers returns the crawlers this package knows: Googlebot,
// Bingbot, YandexBot, Applebot, DuckDuckBot, Baiduspider, Yahoo! Slurp,
// Sogou, SeznamBot, Yeti (Naver), Qwantbot and PetalBot. The slice is a
// fresh copy, which the caller may change.
func KnownCrawlers() []Crawler {
	out := make([]Crawler, len(knownCrawlers))
	for i, c := range knownCrawlers {
		out[i] = Crawler{
			Name:    c.Name,
			Tokens:  append([]string(nil), c.Tokens...),
			Domains: append([]string(nil), c.Domains...),
		}
	}
	return out
}

// Claim returns the first of crawlers (KnownCrawlers when nil) whose
// token appears in userAgent, and that token. A claim is only a claim:
// anyone can send "Googlebot"; [Verifier] checks it.
func Claim(userAgent string, crawlers []Crawler) (c Crawler, token string, ok bool) {
	if crawlers == nil {
		crawlers = knownCrawlers
	}
	for _, c := range crawlers {
		for _, t := range c.Tokens {
			if t != "" && containsFold(userAgent, t) {
				return c, t, true
			}
		}
	}
	return Crawler{}, "", false
}

// containsFold reports whether substr is within s, ignoring case, without
// allocating.
func containsFold(s, substr string) bool {
	n := len(substr)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], substr) {
			return true
		}
	}
	return false
}

// inDomain reports whether the DNS name is one of domains or under one.
func inDomain(name string, domains []string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSuffix(d, "."))
		if d == "" {
			continue
		}
		if name == d || strings.HasSuffix(name, "."+d) {
			return true
		}
	}
	return false
}
