package cmstest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

//go:embed dokuwiki.php
var dokuwikiPHP []byte

// dokuwikiDir is where Debian's dokuwiki package installs DokuWiki's code;
// dokuwikiConf is where it keeps the configuration, which the site copies.
const (
	dokuwikiDir  = "/usr/share/dokuwiki"
	dokuwikiConf = "/etc/dokuwiki"
)

func dokuwikiNeeds() map[string]string {
	m := apacheNeeds()
	m[filepath.Join(dokuwikiDir, "doku.php")] = "dokuwiki"
	m[filepath.Join(dokuwikiDir, "lib/tpl/dokuwiki/main.php")] = "dokuwiki"
	m[filepath.Join(dokuwikiConf, "dokuwiki.php")] = "dokuwiki"
	return m
}

// DokuWiki starts a DokuWiki drawn from seed and returns it with its
// ground truth; it is stopped when the test ends. It skips the test when
// the packages it needs are missing, or fails it then when the
// environment variable CI is set; it fails the test when the site cannot
// be set up.
//
// The site is Debian's DokuWiki (2022-07-31 "Igor") served from
// /usr/share/dokuwiki, with the configuration and the data its own: the
// default template, ACLs on with read access for all (as Debian's
// package sets it up), URLs without rewriting (/doku.php?id=ns:page, the
// default), no XML sitemap (the default). Its content, saved through
// DokuWiki's own saveWikiText, is 200–400 pages in 4–6 namespaces and
// one or two namespaces nested in those, each namespace with a start page
// listing its pages, the pages linked to each other with wiki links (a
// few to pages that do not exist), each page with 2–8 revisions by the
// wiki's users from 2022 on, so that the attic and the changelogs are
// real; then the pages are indexed as bin/indexer.php would.
//
// Its ground truth (Real), computed by DokuWiki, holds:
//   - "page": every page, /doku.php?id=ns:page, the start page
//     /doku.php?id=start among them;
//   - "index": the index ("Sitemap" in the template) as the start page
//     links it, /doku.php?id=start&do=index: the one link to an index
//     without rel="nofollow". The index itself has meta robots
//     noindex,nofollow, as every view but a page's current revision has.
//
// It leaves out: URL, which redirects to the start page (and which is the
// start page's canonical URL); the index as other pages link it
// (?id=PAGE&do=index, rel="nofollow") and its namespace views (&idx=ns,
// linked from the index only); old revisions (&rev=), diffs (&do=diff),
// the revisions lists (&do=revisions), backlinks, recent changes, the
// source view (&do=edit), login, the media manager, feeds (feed.php),
// exports; and the pages that links name but nobody has written, which
// answer 200 with noindex,follow.
func DokuWiki(t testing.TB, seed int64) *Site {
	t.Helper()
	start := time.Now()
	require(t, missing("DokuWiki", dokuwikiNeeds()))
	dir, err := workDir(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	s, err := startDokuWiki(ctx, t, dir, seed, start)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startDokuWiki(ctx context.Context, t testing.TB, dir string, seed int64, start time.Time) (*Site, error) {
	if err := letThrough(dir); err != nil {
		return nil, err
	}
	conf, data, apacheDir, setup := filepath.Join(dir, "conf"), filepath.Join(dir, "data"), filepath.Join(dir, "apache"), filepath.Join(dir, "setup")
	for _, d := range []string{conf, data, apacheDir, setup} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"pages", "attic", "media", "media_attic", "meta", "media_meta", "cache", "index", "locks", "tmp", "log"} {
		if err := os.Mkdir(filepath.Join(data, d), 0o755); err != nil {
			return nil, err
		}
	}
	g := newGen(seed, 3)
	var users []string
	var usersFile strings.Builder
	usersFile.WriteString("# Written by internal/cmstest (gentlecrawl). login:password hash:name:mail:groups\n")
	for i, fn := range g.sample(firstNames, g.between(4, 8)) {
		login := strings.ToLower(fn)
		groups := "user"
		if i == 0 {
			groups = "admin,user"
		}
		// No password hash matches: nobody logs in.
		fmt.Fprintf(&usersFile, "%s:!:%s %s:%s@cms.test:%s\n", login, fn, g.pick(lastNames), login, groups)
		users = append(users, login)
	}
	spec := dokuwikiContent(seed, users)
	if err := writeDokuWikiConf(conf, data, spec.Title, usersFile.String()); err != nil {
		return nil, err
	}
	prepend := filepath.Join(dir, "prepend.php")
	if err := os.WriteFile(prepend, []byte(dokuwikiPrepend(conf)), 0o644); err != nil {
		return nil, err
	}
	a, err := startApache(ctx, apacheDir, apacheSite{
		Root:     dokuwikiDir,
		Override: "None",
		Index:    "index.php",
		Lines: []string{
			// The site's configuration, not Debian's (inc/preload.php
			// defines these only when they are not yet).
			"php_admin_value auto_prepend_file " + strconv.Quote(prepend),
			// What the .htaccess files of Debian's install (which this
			// configuration does not read) and its apache.conf deny.
			"<Directory " + strconv.Quote(dokuwikiDir+"/bin") + ">",
			"  Require all denied",
			"</Directory>",
			"<Directory " + strconv.Quote(dokuwikiDir+"/inc") + ">",
			"  Require all denied",
			"</Directory>",
			"<Directory " + strconv.Quote(dokuwikiDir+"/vendor") + ">",
			"  Require all denied",
			"</Directory>",
			`<FilesMatch "^(_ht|README$|VERSION$|COPYING$)">`,
			"  Require all denied",
			"</FilesMatch>",
		},
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

	specFile, script, truthFile := filepath.Join(setup, "spec.json"), filepath.Join(setup, "dokuwiki.php"), filepath.Join(setup, "truth.json")
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(script, dokuwikiPHP, 0o644); err != nil {
		return nil, err
	}
	if _, err := runPHP(ctx, setup, script, conf+"/", base, specFile, truthFile); err != nil {
		return nil, err
	}
	if err := giveToServer(data); err != nil {
		return nil, err
	}
	var truth map[string][]string
	if b, err = os.ReadFile(truthFile); err == nil {
		err = json.Unmarshal(b, &truth)
	}
	if err != nil {
		return nil, fmt.Errorf("cmstest: DokuWiki's ground truth: %w", err)
	}
	s, err := newSite(base, truth, dir, a, start)
	if err != nil {
		return nil, err
	}
	t.Logf("cmstest: DokuWiki at %s: %d pages in %d namespaces, %d revisions by %d users; %d real URLs; set up in %v",
		base, spec.Pages, len(spec.Namespaces), len(spec.Saves), len(users), len(s.Real), s.Setup.Round(time.Millisecond))
	return s, nil
}

// dokuwikiPrepend is the PHP that Apache runs before each of DokuWiki's
// entry points: the configuration directory is the site's.
func dokuwikiPrepend(conf string) string {
	c := phpString(conf + "/")
	return "<?php\n// Written by internal/cmstest (gentlecrawl): this DokuWiki's configuration is its own.\n" +
		"if (!defined('DOKU_CONF')) define('DOKU_CONF', " + c + ");\n" +
		"if (!defined('DOKU_MAIN_CONF')) define('DOKU_MAIN_CONF', " + c + ");\n"
}

// writeDokuWikiConf fills conf: Debian's configuration files, then the
// site's local.php, ACLs and users.
func writeDokuWikiConf(conf, data, title, users string) error {
	ents, err := os.ReadDir(dokuwikiConf)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		// Not the web servers' snippets, the examples, nor what the site
		// writes itself; acl.auth.php and users.auth.php are links into
		// /var/lib/dokuwiki.
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || slices.Contains([]string{"apache.conf", "lighttpd.conf", "htaccess", "local.php"}, name) ||
			strings.HasSuffix(name, ".dist") || strings.HasSuffix(name, ".example") {
			continue
		}
		if err := copyFile(filepath.Join(dokuwikiConf, name), filepath.Join(conf, name)); err != nil {
			return err
		}
	}
	local := fmt.Sprintf(`<?php
// Written by internal/cmstest (gentlecrawl) for one test.
$conf['title'] = %s;
$conf['savedir'] = %s;
$conf['lang'] = 'en';
$conf['template'] = 'dokuwiki';
$conf['start'] = 'start';
$conf['license'] = 'cc-by-sa';
$conf['useacl'] = 1;
$conf['authtype'] = 'authplain';
$conf['superuser'] = '@admin';
$conf['userewrite'] = 0;
$conf['useslash'] = 0;
$conf['sitemap'] = 0;
// Nothing from other hosts: no update check, no fetching of external
// media, no CDN for jQuery, no DNS look-ups.
$conf['updatecheck'] = 0;
$conf['fetchsize'] = 0;
$conf['jquerycdn'] = 0;
$conf['dnslookups'] = 0;
`, phpString(title), phpString(data))
	acl := "# acl.auth.php\n# <?php exit()?>\n# Written by internal/cmstest (gentlecrawl): read for all, as Debian's package sets it up.\n*\t@ALL\t1\n*\t@user\t8\n"
	for name, text := range map[string]string{"local.php": local, "acl.auth.php": acl, "users.auth.php": users} {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
