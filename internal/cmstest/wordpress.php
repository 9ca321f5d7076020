<?php
// Run by internal/cmstest (gentlecrawl) with PHP's command-line interpreter:
//
//   php wordpress.php ABSPATH SITEURL SOCKET install SPEC.json
//   php wordpress.php ABSPATH SITEURL SOCKET content SPEC.json TRUTH.json
//
// "install" creates the database and installs WordPress as its own
// installer does (wp_install), then sets the options of the site: pretty
// permalinks, threaded comments, the footer's widgets. "content" creates
// the users, categories, tags, pages, posts and comments of SPEC.json
// through WordPress's own API, writes .htaccess with WordPress's rewrite
// rules, and writes the ground truth, computed by WordPress, to TRUTH.json.
// Two processes, because an installing WordPress (WP_INSTALLING) behaves
// differently from a running one.

if (PHP_SAPI !== 'cli') {
    exit(1);
}
error_reporting(E_ALL & ~E_DEPRECATED & ~E_NOTICE);
list(, $abspath, $siteurl, $socket, $mode, $specFile) = $argv;
$truthFile = $argv[6] ?? '';
$spec = json_decode(file_get_contents($specFile), true, 512, JSON_THROW_ON_ERROR);

// What a request to the site would have: WordPress reads the host from it
// here and there.
$u = parse_url($siteurl);
$_SERVER['HTTP_HOST'] = $u['host'] . ':' . $u['port'];
$_SERVER['SERVER_NAME'] = $u['host'];
$_SERVER['SERVER_PORT'] = (string) $u['port'];
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['PHP_SELF'] = '/index.php';
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';

// Pluggable: no mail is sent (wp_install mails the new administrator).
function wp_mail($to, $subject, $message, $headers = '', $attachments = array()) {
    return true;
}

// noRequests makes every HTTP request of WordPress's fail at once: the
// setup makes none. wp_install would otherwise request a post of its own
// site (wp_install_maybe_enable_pretty_permalinks), which the access log,
// meant for the tests' requests alone, would record.
function noRequests() {
    add_filter('pre_http_request', function ($response, $args, $url) {
        return new WP_Error('cmstest', "no HTTP request while the site is set up ($url)");
    }, 10, 3);
}

if ($mode === 'install') {
    $db = new mysqli(null, 'root', '', '', 0, $socket);
    if (!$db->query('CREATE DATABASE wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci')) {
        fwrite(STDERR, $db->error . "\n");
        exit(1);
    }
    $db->close();

    define('WP_INSTALLING', true);
    require $abspath . 'wp-load.php';
    noRequests();
    require_once ABSPATH . 'wp-admin/includes/upgrade.php';
    $r = wp_install($spec['title'], 'admin', 'admin@cms.test', true, '', wp_generate_password(20));
    if (is_wp_error($r)) {
        fwrite(STDERR, $r->get_error_message() . "\n");
        exit(1);
    }

    // wp_install's sample content goes: the content is the seed's.
    foreach (get_posts(array('post_type' => array('post', 'page'), 'post_status' => 'any', 'numberposts' => -1)) as $p) {
        wp_delete_post($p->ID, true);
    }

    update_option('blogdescription', $spec['tagline']);
    update_option('posts_per_page', $spec['posts_per_page']);
    // Threaded comments, so that each comment has a reply link
    // (?replytocom=ID); all on one page (no comment-page-N).
    update_option('thread_comments', 1);
    update_option('thread_comments_depth', 5);
    update_option('page_comments', 0);
    update_option('comment_registration', 0);
    update_option('comment_moderation', 0);
    // No gravatar images, whose URLs are on another host; no pingbacks
    // sent for links in posts.
    update_option('show_avatars', 0);
    update_option('default_pingback_flag', 0);
    update_option('timezone_string', 'UTC');
    update_option('gmt_offset', 0);

    global $wp_rewrite;
    $wp_rewrite->set_permalink_structure('/%year%/%monthnum%/%postname%/');

    // The footer's widgets (twentytwentyone's only widget area), classic
    // ones, which render as WordPress has for years: search, recent posts
    // and comments, archives, categories, the calendar, the tag cloud and
    // the pages (which the theme shows nowhere else without a menu).
    $widgets = array(
        'search' => array('title' => ''),
        'recent-posts' => array('title' => '', 'number' => 5, 'show_date' => false),
        'recent-comments' => array('title' => '', 'number' => 5),
        'archives' => array('title' => '', 'count' => 0, 'dropdown' => 0),
        'categories' => array('title' => '', 'count' => 0, 'hierarchical' => 1, 'dropdown' => 0),
        'calendar' => array('title' => ''),
        'tag_cloud' => array('title' => '', 'count' => 0, 'taxonomy' => 'post_tag'),
        'pages' => array('title' => '', 'sortby' => 'menu_order', 'exclude' => ''),
    );
    $sidebar = array();
    foreach ($widgets as $base => $settings) {
        update_option('widget_' . $base, array(2 => $settings, '_multiwidget' => 1));
        $sidebar[] = $base . '-2';
    }
    update_option('sidebars_widgets', array(
        'wp_inactive_widgets' => array(),
        'sidebar-1' => $sidebar,
        'array_version' => 3,
    ));
    exit(0);
}

if ($mode !== 'content') {
    fwrite(STDERR, "unknown mode $mode\n");
    exit(2);
}

require $abspath . 'wp-load.php';
noRequests();
require_once ABSPATH . 'wp-admin/includes/admin.php';
wp_set_current_user(1);
// The content is ours: no HTML filtering (kses would strip the block
// comments of a user without unfiltered_html).
kses_remove_filters();
wp_defer_term_counting(true);
wp_defer_comment_counting(true);
wp_suspend_cache_invalidation(true);

$users = array();
foreach ($spec['users'] as $su) {
    $id = wp_insert_user(array(
        'user_login' => $su['login'],
        'user_pass' => wp_generate_password(20),
        'user_email' => $su['email'],
        'display_name' => $su['name'],
        'nickname' => $su['name'],
        'first_name' => explode(' ', $su['name'])[0],
        'description' => $su['bio'],
        'role' => 'author',
    ));
    if (is_wp_error($id)) {
        fwrite(STDERR, 'user ' . $su['login'] . ': ' . $id->get_error_message() . "\n");
        exit(1);
    }
    $users[] = $id;
}

$cats = array();
foreach ($spec['categories'] as $c) {
    $args = array('description' => $c['description']);
    if ($c['parent'] >= 0) {
        $args['parent'] = $cats[$c['parent']];
    }
    $t = wp_insert_term($c['name'], 'category', $args);
    if (is_wp_error($t)) {
        fwrite(STDERR, 'category ' . $c['name'] . ': ' . $t->get_error_message() . "\n");
        exit(1);
    }
    $cats[] = $t['term_id'];
}
$tags = array();
foreach ($spec['tags'] as $name) {
    $t = wp_insert_term($name, 'post_tag');
    if (is_wp_error($t)) {
        fwrite(STDERR, "tag $name: " . $t->get_error_message() . "\n");
        exit(1);
    }
    $tags[] = $t['term_id'];
}

$pages = array();
foreach ($spec['pages'] as $p) {
    $id = wp_insert_post(array(
        'post_type' => 'page',
        'post_status' => 'publish',
        'post_title' => $p['title'],
        'post_content' => $p['content'],
        'post_author' => $users[$p['author']],
        'post_date' => $p['date'],
        'post_date_gmt' => $p['date'],
        'post_parent' => $p['parent'] >= 0 ? $pages[$p['parent']] : 0,
        'menu_order' => $p['order'],
        'comment_status' => 'closed',
    ), true);
    if (is_wp_error($id)) {
        fwrite(STDERR, 'page ' . $p['title'] . ': ' . $id->get_error_message() . "\n");
        exit(1);
    }
    $pages[] = $id;
}

foreach ($spec['posts'] as $p) {
    $id = wp_insert_post(array(
        'post_type' => 'post',
        'post_status' => 'publish',
        'post_title' => $p['title'],
        'post_content' => $p['content'],
        'post_author' => $users[$p['author']],
        'post_date' => $p['date'],
        'post_date_gmt' => $p['date'],
        'post_category' => array_map(function ($i) use ($cats) { return $cats[$i]; }, $p['cats']),
        'comment_status' => 'open',
        'ping_status' => 'closed',
    ), true);
    if (is_wp_error($id)) {
        fwrite(STDERR, 'post ' . $p['title'] . ': ' . $id->get_error_message() . "\n");
        exit(1);
    }
    if ($p['tags']) {
        wp_set_object_terms($id, array_map(function ($i) use ($tags) { return $tags[$i]; }, $p['tags']), 'post_tag');
    }
    $comments = array();
    foreach ($p['comments'] as $c) {
        $cid = wp_insert_comment(array(
            'comment_post_ID' => $id,
            'comment_author' => $c['author'],
            'comment_author_email' => $c['email'],
            'comment_author_url' => '',
            'comment_author_IP' => '127.0.0.1',
            'comment_content' => $c['content'],
            'comment_date' => $c['date'],
            'comment_date_gmt' => $c['date'],
            'comment_parent' => $c['parent'] >= 0 ? $comments[$c['parent']] : 0,
            'comment_approved' => 1,
            'comment_type' => 'comment',
            'user_id' => 0,
        ));
        if (!$cid) {
            fwrite(STDERR, 'comment on ' . $p['title'] . " failed\n");
            exit(1);
        }
        $comments[] = $cid;
    }
}

wp_suspend_cache_invalidation(false);
wp_defer_term_counting(false);
wp_defer_comment_counting(false);
wp_cache_flush();
clean_term_cache($cats, 'category');
clean_term_cache($tags, 'post_tag');

// The rewrite rules, stored now rather than on the first request, and
// .htaccess as WordPress writes it (save_mod_rewrite_rules, which checks
// for Apache's mod_rewrite and so does nothing from the command line).
global $wp_rewrite;
flush_rewrite_rules(false);
if (!insert_with_markers(ABSPATH . '.htaccess', 'WordPress', explode("\n", $wp_rewrite->mod_rewrite_rules()))) {
    fwrite(STDERR, "cannot write .htaccess\n");
    exit(1);
}

// The ground truth, each URL as WordPress prints it in its links.
$ppp = (int) get_option('posts_per_page');
$truth = array();
$add = function ($kind, $url) use (&$truth) {
    $truth[$kind][] = $url;
};
// paged returns the URL of page $n of the list at $base, as
// get_pagenum_link makes it with pretty permalinks.
$paged = function ($base, $n) use ($wp_rewrite) {
    return trailingslashit($base) . user_trailingslashit($wp_rewrite->pagination_base . '/' . $n, 'paged');
};

$add('home', home_url('/'));
$home = new WP_Query(array('post_type' => 'post', 'post_status' => 'publish', 'posts_per_page' => $ppp, 'fields' => 'ids'));
for ($n = 2; $n <= $home->max_num_pages; $n++) {
    $add('home-page', $paged(home_url('/'), $n));
}
foreach (get_posts(array('post_type' => 'post', 'post_status' => 'publish', 'numberposts' => -1)) as $p) {
    $add('post', get_permalink($p));
}
foreach (get_posts(array('post_type' => 'page', 'post_status' => 'publish', 'numberposts' => -1)) as $p) {
    $add('page', get_permalink($p));
}
foreach (get_categories(array('hide_empty' => false)) as $c) {
    // A category's archive lists its posts and its children's.
    $q = new WP_Query(array('cat' => $c->term_id, 'post_status' => 'publish', 'posts_per_page' => $ppp, 'fields' => 'ids'));
    if ($q->found_posts == 0) {
        continue;
    }
    $link = get_category_link($c);
    $add('category', $link);
    for ($n = 2; $n <= $q->max_num_pages; $n++) {
        $add('category-page', $paged($link, $n));
    }
}
foreach (get_tags(array('hide_empty' => true)) as $t) {
    $add('tag', get_tag_link($t));
}
foreach (get_users(array('has_published_posts' => array('post'))) as $a) {
    $add('author', get_author_posts_url($a->ID, $a->user_nicename));
}
global $wpdb;
$days = $wpdb->get_col("SELECT DISTINCT DATE(post_date) FROM $wpdb->posts WHERE post_type = 'post' AND post_status = 'publish' ORDER BY 1");
// Year archives are left out: neither the theme nor the widgets link
// them (the archives widget lists months, the calendar months and days).
$months = array();
foreach ($days as $d) {
    list($y, $m, $dd) = explode('-', $d);
    $months["$y-$m"] = true;
    $add('day', get_day_link($y, $m, $dd));
}
foreach (array_keys($months) as $ym) {
    list($y, $m) = explode('-', $ym);
    $add('month', get_month_link($y, $m));
}
if (!file_put_contents($truthFile, json_encode($truth, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT))) {
    exit(1);
}
