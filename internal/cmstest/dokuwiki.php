<?php
// Run by internal/cmstest (gentlecrawl) with PHP's command-line interpreter:
//
//   php dokuwiki.php CONFDIR SITEURL SPEC.json TRUTH.json
//
// It saves every revision of SPEC.json through DokuWiki's own
// saveWikiText, in order, each dated as SPEC.json says, so that the pages,
// the attic, the changelogs and the metadata are DokuWiki's; then indexes
// the pages as DokuWiki's indexer does, and writes the ground truth,
// computed by DokuWiki, to TRUTH.json.

if (PHP_SAPI !== 'cli') {
    exit(1);
}
error_reporting(E_ALL & ~E_DEPRECATED & ~E_NOTICE);
list(, $confDir, $siteurl, $specFile, $truthFile) = $argv;
$spec = json_decode(file_get_contents($specFile), true, 512, JSON_THROW_ON_ERROR);

// As the site's Apache has it (its auto_prepend_file), and the URL its
// requests would give.
define('DOKU_INC', '/usr/share/dokuwiki/');
define('DOKU_CONF', $confDir);
define('DOKU_MAIN_CONF', $confDir);
define('DOKU_URL', $siteurl);
define('DOKU_BASE', parse_url($siteurl, PHP_URL_PATH));
define('NOSESSION', true);
$u = parse_url($siteurl);
$_SERVER['HTTP_HOST'] = $u['host'] . ':' . $u['port'];
$_SERVER['SERVER_NAME'] = $u['host'];
$_SERVER['SERVER_PORT'] = (string) $u['port'];
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';
$_SERVER['SCRIPT_NAME'] = '/doku.php';
require DOKU_INC . 'inc/init.php';

// DokuWiki dates a revision by the page file's modification time after
// it wrote the file (PageFile::saveWikiText, saveOldRevision): after each
// write of the current page (not of an attic copy, which carries its
// date), the file is given the revision's date.
class CmsTestClock
{
    public $time = 0;

    public function afterWrite($event, $param)
    {
        if ($event->data[3] === false && $this->time > 0) {
            touch($event->data[0][0], $this->time);
            clearstatcache();
        }
    }
}
$clock = new CmsTestClock();
global $EVENT_HANDLER, $INFO, $conf;
$EVENT_HANDLER->register_hook('IO_WIKIPAGE_WRITE', 'AFTER', $clock, 'afterWrite');

$names = array();
foreach (file(DOKU_CONF . 'users.auth.php', FILE_IGNORE_NEW_LINES) ?: array() as $line) {
    $f = explode(':', $line);
    if (count($f) >= 3 && $line[0] !== '#') {
        $names[$f[0]] = $f[2];
    }
}
foreach ($spec['saves'] as $s) {
    $clock->time = $s['time'];
    // The editor: the changelog's user, and the metadata's contributor.
    $_SERVER['REMOTE_USER'] = $s['user'];
    $INFO = array('userinfo' => array('name' => $names[$s['user']] ?? $s['user']));
    saveWikiText($s['id'], $s['text'], $s['summary'], $s['minor']);
    if (@filemtime(wikiFN($s['id'])) != $s['time']) {
        fwrite(STDERR, 'revision ' . $s['id'] . ' at ' . $s['time'] . " was not saved\n");
        exit(1);
    }
}
unset($_SERVER['REMOTE_USER']);

// The search index, which the backlinks and the search read, as
// bin/indexer.php builds it.
$pages = array();
search($pages, $conf['datadir'], 'search_allpages', array('skipacl' => true));
foreach ($pages as $p) {
    idx_addPage($p['id'], false, true);
}

// The ground truth, each URL as DokuWiki prints it in its links.
$truth = array('page' => array(), 'index' => array());
foreach ($pages as $p) {
    $truth['page'][] = wl($p['id'], '', true, '&');
}
$truth['index'][] = wl($conf['start'], array('do' => 'index'), true, '&');
if (!file_put_contents($truthFile, json_encode($truth, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT))) {
    exit(1);
}
