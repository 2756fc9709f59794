<?php
// Social events application (CloudStone/Olio style): the one front controller nginx sends every request to.
// Routes, status codes and bodies are the HTTP contract in ../README.md; the load generator depends on them.
declare(strict_types=1);

// Day zero of the generated data: HomePage's "next" events count from it, not from the clock,
// so that every run sees the same pages whatever the day.
const TODAY = '2014-07-21';
const MAX_TAGS_PER_EVENT = 10;

ini_set('display_errors', '0');  // errors go to the log, never into a page

final class HttpError extends Exception
{
}

function fail(int $status, string $message): never
{
    throw new HttpError($message, $status);
}

function db(): PDO
{
    static $pdo = null;
    if ($pdo === null) {
        // php-fpm refuses empty env[] values: "none" (or nothing) as the socket means TCP to host and port
        $socket = (string) getenv('KIT_DB_SOCKET');
        $where = $socket !== '' && $socket !== 'none'
            ? 'unix_socket=' . $socket
            : 'host=' . (getenv('KIT_DB_HOST') ?: '127.0.0.1') . ';port=' . (getenv('KIT_DB_PORT') ?: '3306');
        $pdo = new PDO(
            "mysql:$where;dbname=" . getenv('KIT_DB_NAME') . ';charset=utf8mb4',
            (string) getenv('KIT_DB_USER'),
            (string) getenv('KIT_DB_PASSWORD'),
            [
                PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
                PDO::ATTR_PERSISTENT => false,  // a connection per request, as the three-tier benchmark does
                PDO::ATTR_EMULATE_PREPARES => false,  // real server-side prepared statements
                PDO::ATTR_DEFAULT_FETCH_MODE => PDO::FETCH_ASSOC,
            ],
        );
    }
    return $pdo;
}

function query(string $sql, array $params = []): PDOStatement
{
    $statement = db()->prepare($sql);
    $statement->execute($params);
    return $statement;
}

// ---- input -------------------------------------------------------------------------------------

function id_param(array $from, string $name): int
{
    $value = $from[$name] ?? null;
    if (!is_string($value) || !preg_match('/^[0-9]{1,10}$/', $value) || (int) $value > 4294967295) {
        fail(400, "bad $name");
    }
    return (int) $value;
}

/** A string field of $min..$max bytes of valid UTF-8, trimmed unless it is a password. */
function text_param(array $from, string $name, int $min, int $max, bool $trim = true): string
{
    $value = $from[$name] ?? null;
    if (!is_string($value)) {
        fail(400, "missing $name");
    }
    if ($trim) {
        $value = trim($value);
    }
    if (strlen($value) < $min || strlen($value) > $max || !preg_match('//u', $value)) {
        fail(400, "bad $name");
    }
    return $value;
}

function date_param(array $from, string $name): string
{
    $value = text_param($from, $name, 10, 10);
    $date = DateTime::createFromFormat('!Y-m-d', $value);
    if ($date === false || $date->format('Y-m-d') !== $value || (int) $date->format('Y') < 1000) {
        fail(400, "bad $name");
    }
    return $value;
}

/** Distinct lower-case tag names, sorted: a fixed lock order, so concurrent AddEvents rarely deadlock. */
function tags_param(array $from, string $name): array
{
    $tags = [];
    foreach (explode(',', text_param($from, $name, 0, 1000)) as $tag) {
        $tag = strtolower(trim($tag));
        if ($tag === '') {
            continue;
        }
        if (!preg_match('/^[a-z0-9_.-]{1,50}$/', $tag)) {
            fail(400, "bad $name");
        }
        $tags[$tag] = true;
    }
    if (count($tags) > MAX_TAGS_PER_EVENT) {
        fail(400, "too many $name");
    }
    $tags = array_keys($tags);
    sort($tags, SORT_STRING);
    return $tags;
}

// ---- output ------------------------------------------------------------------------------------

function h(string|int|null $value): string
{
    return htmlspecialchars((string) $value, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
}

function page(int $status, string $title, string $body): void
{
    http_response_code($status);
    header('Content-Type: text/html; charset=utf-8');
    echo "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", h($title), "</title></head><body>\n",
        '<h1>', h($title), "</h1>\n", $body, "</body></html>\n";
}

function plain(int $status, string $body): void
{
    http_response_code($status);
    header('Content-Type: text/plain; charset=utf-8');
    echo $body, "\n";
}

function event_list(array $events, array $tags = []): string
{
    $items = '';
    foreach ($events as $event) {
        $items .= '<li><a href="/event?id=' . $event['id'] . '">' . h($event['title']) . '</a> '
            . h($event['event_date']);
        if (isset($tags[$event['id']])) {
            $items .= ' <span class="tags">' . h(implode(', ', $tags[$event['id']])) . '</span>';
        }
        $items .= "</li>\n";
    }
    return "<ul class=\"events\">\n$items</ul>\n";
}

/** Tag names of some events, by event id. */
function tags_of(array $event_ids): array
{
    if (!$event_ids) {
        return [];
    }
    $marks = implode(',', array_fill(0, count($event_ids), '?'));
    $tags = [];
    $rows = query(
        "SELECT et.event_id, t.name FROM event_tag et JOIN tag t ON t.id = et.tag_id
         WHERE et.event_id IN ($marks) ORDER BY t.name",
        array_values($event_ids),
    );
    foreach ($rows as $row) {
        $tags[$row['event_id']][] = $row['name'];
    }
    return $tags;
}

// ---- routes ------------------------------------------------------------------------------------

function home_page(): void
{
    $events = query(
        'SELECT id, title, event_date FROM event WHERE event_date >= ? ORDER BY event_date, id LIMIT 10',
        [TODAY],
    )->fetchAll();
    $top = query('SELECT name, refcount FROM tag ORDER BY refcount DESC, name LIMIT 20')->fetchAll();
    $cloud = '';
    foreach ($top as $tag) {
        $cloud .= '<li><a href="/tags?tag=' . rawurlencode($tag['name']) . '">' . h($tag['name']) . '</a> '
            . $tag['refcount'] . "</li>\n";
    }
    page(200, 'Upcoming events', event_list($events, tags_of(array_column($events, 'id')))
        . "<h2>Popular tags</h2>\n<ul class=\"tags\">\n$cloud</ul>\n");
}

function login(): void
{
    $email = text_param($_POST, 'email', 1, 190);
    $password = text_param($_POST, 'password', 1, 200, trim: false);
    $person = query('SELECT id, name, salt, password FROM person WHERE email = ?', [$email])->fetch();
    if ($person === false || !hash_equals($person['password'], hash('sha256', $person['salt'] . $password))) {
        fail(403, 'wrong email or password');
    }
    $dir = (string) getenv('KIT_SESSION_DIR');
    if ($dir !== '') {
        if (!is_dir($dir)) {
            @mkdir($dir, 0700, true);  // a concurrent request may have made it meanwhile
        }
        session_save_path($dir);
    }
    // Debian turns session garbage collection off (a cron job cleans its own folder): clean ours here
    session_start(['gc_probability' => 1, 'gc_divisor' => 1000]);
    $_SESSION['person_id'] = $person['id'];
    session_write_close();
    page(200, 'Welcome', '<p>Logged in as <a href="/person?id=' . $person['id'] . '">' . h($person['name'])
        . "</a></p>\n");
}

function tag_search(): void
{
    $tag = text_param($_GET, 'tag', 1, 50);
    $events = query(
        'SELECT e.id, e.title, e.event_date FROM tag t
         JOIN event_tag et ON et.tag_id = t.id JOIN event e ON e.id = et.event_id
         WHERE t.name = ? ORDER BY e.event_date DESC, e.id DESC LIMIT 50',
        [$tag],
    )->fetchAll();
    page(200, "Events tagged $tag", event_list($events));
}

function event_detail(): void
{
    $id = id_param($_GET, 'id');
    $event = query(
        'SELECT e.id, e.title, e.description, e.event_date, e.person_id, p.name AS submitter
         FROM event e JOIN person p ON p.id = e.person_id WHERE e.id = ?',
        [$id],
    )->fetch();
    if ($event === false) {
        fail(404, 'no such event');
    }
    $attendees = query(
        'SELECT p.id, p.name FROM attendance a JOIN person p ON p.id = a.person_id
         WHERE a.event_id = ? ORDER BY a.person_id LIMIT 50',
        [$id],
    )->fetchAll();
    $people = '';
    foreach ($attendees as $person) {
        $people .= '<li><a href="/person?id=' . $person['id'] . '">' . h($person['name']) . "</a></li>\n";
    }
    page(200, $event['title'], '<p class="date">' . h($event['event_date']) . "</p>\n"
        . '<p class="description">' . h($event['description']) . "</p>\n"
        . '<p class="submitter">Submitted by <a href="/person?id=' . $event['person_id'] . '">'
        . h($event['submitter']) . "</a></p>\n"
        . '<p class="tags">' . h(implode(', ', tags_of([$id])[$id] ?? [])) . "</p>\n"
        . "<h2>Attendees</h2>\n<ul class=\"attendees\">\n$people</ul>\n");
}

function person_detail(): void
{
    $id = id_param($_GET, 'id');
    $person = query('SELECT id, name, email FROM person WHERE id = ?', [$id])->fetch();
    if ($person === false) {
        fail(404, 'no such person');
    }
    $events = query(
        'SELECT e.id, e.title, e.event_date FROM attendance a JOIN event e ON e.id = a.event_id
         WHERE a.person_id = ? ORDER BY e.event_date, e.id LIMIT 50',
        [$id],
    )->fetchAll();
    page(200, $person['name'], '<p class="email">' . h($person['email']) . "</p>\n<h2>Attending</h2>\n"
        . event_list($events));
}

function add_person(): void
{
    $name = text_param($_POST, 'name', 1, 100);
    $email = text_param($_POST, 'email', 3, 190);
    $password = text_param($_POST, 'password', 1, 200, trim: false);
    if (filter_var($email, FILTER_VALIDATE_EMAIL) === false) {
        fail(400, 'bad email');
    }
    $salt = bin2hex(random_bytes(8));
    try {
        query(
            'INSERT INTO person (name, email, salt, password) VALUES (?, ?, ?, ?)',
            [$name, $email, $salt, hash('sha256', $salt . $password)],
        );
    } catch (PDOException $e) {
        if (($e->errorInfo[1] ?? 0) === 1062) {  // ER_DUP_ENTRY on the unique email
            fail(409, 'email already registered');
        }
        throw $e;
    }
    plain(201, 'id=' . db()->lastInsertId());
}

function add_event(): void
{
    $person = id_param($_POST, 'person_id');
    $title = text_param($_POST, 'title', 1, 200);
    $description = text_param($_POST, 'description', 0, 4000);
    $date = date_param($_POST, 'date');
    $tags = tags_param($_POST, 'tags');
    if (query('SELECT id FROM person WHERE id = ?', [$person])->fetch() === false) {
        fail(400, 'no such person_id');
    }
    $db = db();
    for ($attempt = 1; ; $attempt++) {
        try {
            $db->beginTransaction();
            query(
                'INSERT INTO event (person_id, title, description, event_date) VALUES (?, ?, ?, ?)',
                [$person, $title, $description, $date],
            );
            $id = (int) $db->lastInsertId();
            $pairs = [];
            foreach ($tags as $tag) {
                // new tags are created, known ones counted; LAST_INSERT_ID(id) returns the id either way
                query(
                    'INSERT INTO tag (name, refcount) VALUES (?, 1)
                     ON DUPLICATE KEY UPDATE refcount = refcount + 1, id = LAST_INSERT_ID(id)',
                    [$tag],
                );
                array_push($pairs, $id, (int) $db->lastInsertId());
            }
            if ($pairs) {
                query(
                    'INSERT INTO event_tag (event_id, tag_id) VALUES '
                        . implode(',', array_fill(0, count($tags), '(?, ?)')),
                    $pairs,
                );
            }
            $db->commit();
            break;
        } catch (PDOException $e) {
            if ($db->inTransaction()) {
                $db->rollBack();
            }
            // a deadlock (1213) or lock wait timeout (1205) on a popular tag: InnoDB rolled back, try again
            if (in_array($e->errorInfo[1] ?? 0, [1213, 1205], true) && $attempt < 3) {
                continue;
            }
            throw $e;
        }
    }
    plain(201, "id=$id");
}

const ROUTES = [
    'GET /' => 'home_page',
    'POST /login' => 'login',
    'GET /tags' => 'tag_search',
    'GET /event' => 'event_detail',
    'GET /person' => 'person_detail',
    'POST /person' => 'add_person',
    'POST /event' => 'add_event',
];

$path = explode('?', $_SERVER['REQUEST_URI'] ?? '/', 2)[0];
try {
    $handler = ROUTES[($_SERVER['REQUEST_METHOD'] ?? 'GET') . ' ' . $path] ?? null;
    if ($handler === null) {
        fail(404, 'not found');
    }
    $handler();
} catch (HttpError $e) {
    page($e->getCode(), 'Error ' . $e->getCode(), '<p>' . h($e->getMessage()) . "</p>\n");
} catch (PDOException $e) {
    error_log("kit-webtier: database error on $path: " . $e->getMessage());
    page(500, 'Error 500', "<p>database error</p>\n");
} catch (Throwable $e) {
    error_log("kit-webtier: error on $path: " . $e->getMessage());
    page(500, 'Error 500', "<p>internal error</p>\n");
}
