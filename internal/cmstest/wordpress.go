package cmstest

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

//go:embed wordpress.php
var wordpressPHP []byte

// wordpressDir is where Debian's wordpress package installs WordPress.
const wordpressDir = "/usr/share/wordpress"

// wordpressTheme is the theme the site uses: Twenty Twenty-One, a classic
// theme with a widget area (its footer), which Debian ships as
// wordpress-theme-twentytwentyone. The wordpress package itself ships no
// theme; WordPress 6.1's default, the block theme Twenty Twenty-Three,
// has no widget area.
const wordpressTheme = "twentytwentyone"

func wordpressNeeds() map[string]string {
	m := apacheNeeds()
	for f, p := range mariadbNeeds {
		m[f] = p
	}
	m[filepath.Join(wordpressDir, "wp-load.php")] = "wordpress"
	m[filepath.Join(wordpressDir, "wp-content/themes", wordpressTheme, "style.css")] = "wordpress-theme-" + wordpressTheme
	if ms, _ := filepath.Glob("/usr/lib/php/*/mysqli.so"); len(ms) == 0 {
		m["/usr/lib/php/*/mysqli.so"] = "php-mysql"
	}
	return m
}

// WordPress starts a WordPress blog drawn from seed and returns it with
// its ground truth; it is stopped when the test ends. It skips the test
// when the packages it needs are missing, or fails it then when the
// environment variable CI is set; it fails the test when the site cannot
// be set up.
//
// The site is Debian's WordPress 6.1 with the theme Twenty Twenty-One and
// pretty permalinks (/%year%/%monthnum%/%postname%/, through mod_rewrite
// and the .htaccess WordPress writes), ten posts a page, threaded
// comments, and in its footer the classic widgets search, recent posts,
// recent comments, archives (by month), categories, calendar, tag cloud
// and pages. Its content, made through WordPress's own PHP functions
// (wp_insert_user, wp_insert_term, wp_insert_post, wp_insert_comment), is
// 250–400 posts from 2021 on over two to three years by 3–6 authors in
// 8–15 categories (some nested) with 30–60 tags, 10–20 pages (some
// nested) and threaded comments on about two posts in three.
//
// Its ground truth (Real), computed by WordPress after the content was
// made, holds:
//   - "home": the home page, URL;
//   - "home-page": the home page's pages 2… (/page/N/), through which
//     every post is reached;
//   - "post": the permalink of every published post;
//   - "page": the permalink of every published page;
//   - "category": the first page of every category's archive that lists
//     a post (its own or a child category's), and "category-page": that
//     archive's further pages (/category/x/page/N/);
//   - "tag", "author": the first page of every tag's and every author's
//     archive that lists a post;
//   - "month", "day": the first page of every month's and every day's
//     archive that lists a post (the archives widget links the months,
//     the calendar months and days).
//
// It leaves out: year archives, which no page links; the further pages of
// tag, author and date archives; feeds; the ?replytocom= reply links
// (rel="nofollow", and their pages noindex); the search; the REST API and
// oEmbed (/wp-json/…); ?p=N shortlinks; xmlrpc.php; wp-login.php;
// robots.txt and the sitemaps it names (/wp-sitemap*.xml).
//
// Comments are all on their post's page (no comment-page-N), and avatars
// are off (their images are on another host).
func WordPress(t testing.TB, seed int64) *Site {
	t.Helper()
	start := time.Now()
	require(t, missing("WordPress", wordpressNeeds()))
	dir, err := workDir(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	s, err := startWordPress(ctx, t, dir, seed, start)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startWordPress(ctx context.Context, t testing.TB, dir string, seed int64, start time.Time) (*Site, error) {
	if err := letThrough(dir); err != nil {
		return nil, err
	}
	dbDir, apacheDir, www, setup := filepath.Join(dir, "db"), filepath.Join(dir, "apache"), filepath.Join(dir, "www"), filepath.Join(dir, "setup")
	for _, d := range []string{dbDir, apacheDir, www, setup} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	socketDir := dbDir
	if len(socketDir) > 80 {
		// A deep temporary directory: the socket goes to a short one.
		d, err := os.MkdirTemp("", "cmstest")
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, err
		}
		socketDir = d
	}

	// MariaDB starts while WordPress is copied.
	type dbResult struct {
		m   *mariadb
		err error
	}
	dbc := make(chan dbResult, 1)
	go func() {
		m, err := startMariaDB(ctx, dbDir, socketDir)
		dbc <- dbResult{m, err}
	}()
	copyErr := copyWordPress(www)
	db := <-dbc
	if db.err != nil {
		return nil, db.err
	}
	t.Cleanup(func() {
		if err := db.m.stop(); err != nil {
			t.Error(err)
		}
	})
	if copyErr != nil {
		return nil, copyErr
	}

	// Apache first: the site's URL, which WordPress stores, has its port.
	a, err := startApache(ctx, apacheDir, apacheSite{
		Root:     www,
		Override: "FileInfo", // WordPress's .htaccess: mod_rewrite
		Index:    "index.php index.html",
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := a.stop(); err != nil {
			t.Error(err)
		}
	})
	base := "http://" + a.addr + "/"

	if err := writeWPConfig(www, base, db.m.socket); err != nil {
		return nil, err
	}
	spec := wordpressContent(seed)
	specFile, script, truthFile := filepath.Join(setup, "spec.json"), filepath.Join(setup, "wordpress.php"), filepath.Join(setup, "truth.json")
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(script, wordpressPHP, 0o644); err != nil {
		return nil, err
	}
	args := []string{www + "/", base, db.m.socket}
	if _, err := runPHP(ctx, setup, script, append(args, "install", specFile)...); err != nil {
		return nil, err
	}
	if _, err := runPHP(ctx, setup, script, append(args, "content", specFile, truthFile)...); err != nil {
		return nil, err
	}
	if err := giveToServer(filepath.Join(www, "wp-content")); err != nil {
		return nil, err
	}
	var truth map[string][]string
	if b, err = os.ReadFile(truthFile); err == nil {
		err = json.Unmarshal(b, &truth)
	}
	if err != nil {
		return nil, fmt.Errorf("cmstest: WordPress's ground truth: %w", err)
	}
	s, err := newSite(base, truth, dir, a, start)
	if err != nil {
		return nil, err
	}
	t.Logf("cmstest: WordPress at %s: %d posts, %d pages, %d comments, %d users, %d categories, %d tags (%s to %s); %d real URLs; set up in %v",
		base, len(spec.Posts), len(spec.Pages), spec.Comments, len(spec.Users), len(spec.Categories), len(spec.Tags),
		spec.Span[0][:10], spec.Span[1][:10], len(s.Real), s.Setup.Round(time.Millisecond))
	return s, nil
}

// copyWordPress lays out the site's document root in www from Debian's
// install. WordPress finds its configuration and its root (ABSPATH) from
// the path of the entry point PHP runs, with symbolic links resolved:
// the entry points — the top-level PHP files and wp-admin — are copied,
// so that they find the site's own wp-config.php; wp-includes, which
// holds no entry point that loads the configuration, is a link to
// Debian's. wp-content is the site's own, its theme a link to Debian's.
func copyWordPress(www string) error {
	ents, err := os.ReadDir(wordpressDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		src, dst := filepath.Join(wordpressDir, e.Name()), filepath.Join(www, e.Name())
		switch {
		case e.Name() == "wp-config.php":
			// Debian's looks for /etc/wordpress/config-HOST.php; the site
			// has its own (writeWPConfig).
		case e.Name() == "wp-includes":
			err = os.Symlink(src, dst)
		case e.Name() == "wp-admin":
			err = copyTree(src, dst)
		case e.Name() == "wp-content":
			// Below.
		case e.Type().IsRegular():
			err = copyFile(src, dst)
		}
		if err != nil {
			return fmt.Errorf("cmstest: copying WordPress: %w", err)
		}
	}
	content := filepath.Join(www, "wp-content")
	for _, d := range []string{"themes", "plugins", "uploads"} {
		if err := os.MkdirAll(filepath.Join(content, d), 0o755); err != nil {
			return err
		}
	}
	for _, f := range []string{"index.php", "plugins/index.php"} {
		if err := copyFile(filepath.Join(wordpressDir, "wp-content", f), filepath.Join(content, f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return os.Symlink(filepath.Join(wordpressDir, "wp-content/themes", wordpressTheme), filepath.Join(content, "themes", wordpressTheme))
}

// writeWPConfig writes the site's wp-config.php.
func writeWPConfig(www, base, socket string) error {
	home := strings.TrimSuffix(base, "/")
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("<?php")
	p("// Written by internal/cmstest (gentlecrawl) for one test.")
	p("define('DB_NAME', 'wordpress');")
	p("define('DB_USER', 'root');")
	p("define('DB_PASSWORD', '');")
	p("define('DB_HOST', %s);", phpString("localhost:"+socket))
	p("define('DB_CHARSET', 'utf8mb4');")
	p("define('DB_COLLATE', '');")
	for _, k := range []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"} {
		var r [24]byte
		rand.Read(r[:])
		p("define('%s', '%s');", k, hex.EncodeToString(r[:]))
	}
	p("$table_prefix = 'wp_';")
	p("define('WP_HOME', %s);", phpString(home))
	p("define('WP_SITEURL', %s);", phpString(home))
	// The theme wp_install sets (WordPress 6.1's default is
	// twentytwentythree, which Debian's wordpress does not ship).
	p("define('WP_DEFAULT_THEME', %s);", phpString(wordpressTheme))
	// No request of WordPress's own: wp-cron.php, which a page view
	// would otherwise request from the site itself (and so put in the
	// access log), and nothing to other hosts (update checks).
	p("define('DISABLE_WP_CRON', true);")
	p("define('WP_HTTP_BLOCK_EXTERNAL', true);")
	p("define('AUTOMATIC_UPDATER_DISABLED', true);")
	p("define('WP_AUTO_UPDATE_CORE', false);")
	p("define('WP_DEBUG', false);")
	p("if (!defined('ABSPATH')) {")
	p("    define('ABSPATH', __DIR__ . '/');")
	p("}")
	p("require_once ABSPATH . 'wp-settings.php';")
	return os.WriteFile(filepath.Join(www, "wp-config.php"), []byte(b.String()), 0o644)
}
