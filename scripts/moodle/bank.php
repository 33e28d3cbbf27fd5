<?php
// The imported bank as Moodle's own question engine marks it: every numerical question's right
// answer written in each unit the question lists (µs, μs and us among them where the site reads
// them) must score full marks, and the correct answer Moodle shows a student must read as the
// site shows it. Prints one JSON object: the questions tried, the answers marked, and every
// answer that did not score 1 or correct answer that reads otherwise.
//
// Usage: php bank.php MOODLE_DIR SETUP_JSON SHOWN_JSON
// SHOWN_JSON maps each question's idnumber to the site's answer text (scripts/moodle/run.sh
// writes it with the CLI's exercises export and the core).

define('CLI_SCRIPT', true);
[$self, $moodle, $made, $shown] = $argv + [null, null, null, null];
if (!$moodle || !is_file("$moodle/config.php") || !is_file((string) $made) || !is_file((string) $shown)) {
    fwrite(STDERR, "usage: php bank.php MOODLE_DIR SETUP_JSON SHOWN_JSON\n");
    exit(2);
}
$made = json_decode(file_get_contents($made));
$shown = json_decode(file_get_contents($shown), true);
require("$moodle/config.php");
require_once($CFG->libdir . '/questionlib.php');

/** An answer as a reader reads it: the number (thousands separators dropped) and its unit. */
function reading(string $text): array {
    $text = str_replace([',', "\u{2009}", "\u{202F}"], '', trim($text));
    if (!preg_match('/^(-?[0-9.eE+-]+)\s*(.*)$/u', $text, $m)) {
        return [$text, ''];
    }
    return [(float) $m[1], $m[2] === 'us' || $m[2] === 'μs' ? 'µs' : $m[2]];
}

$context = context_course::instance($made->course);
$ids = $DB->get_records_sql(
    "SELECT q.id, e.idnumber FROM {question} q
       JOIN {question_versions} v ON v.questionid = q.id
       JOIN {question_bank_entries} e ON e.id = v.questionbankentryid
       JOIN {question_categories} c ON c.id = e.questioncategoryid
      WHERE c.contextid = ? AND q.qtype = 'numerical' AND q.parent = 0", [$context->id]);

$tried = 0;
$marked = 0;
$micro = 0;
$wrong = [];
$unlike = [];
foreach ($ids as $row) {
    $q = question_bank::load_question($row->id);
    $tried++;
    $right = null;
    foreach ($q->answers as $a) {
        if ((float) $a->fraction === 1.0) {
            $right = (float) $a->answer;
        }
    }
    // Each unit the question lists, the right value written in it (Moodle: value in a unit =
    // value in the first unit x that unit's multiplier, question/type/numerical/question.php).
    $units = $DB->get_records_menu('question_numerical_units', ['question' => $row->id], 'multiplier',
        'unit, multiplier');
    $answers = $units ? [] : [sprintf('%.15g', $right)];
    foreach ($units as $name => $multiplier) {
        $answers[] = sprintf('%.15g %s', $right * $multiplier, $name);
        $micro += in_array($name, ['µs', 'μs', 'us'], true) ? 1 : 0;
    }
    foreach ($answers as $text) {
        [$fraction] = $q->grade_response(['answer' => $text]);
        $marked++;
        if ((float) $fraction !== 1.0) {
            $wrong[] = ['question' => $row->idnumber, 'answer' => $text, 'fraction' => $fraction];
        }
    }
    $summary = $q->summarise_response($q->get_correct_response());
    $site = $shown[$row->idnumber] ?? null;
    if ($site !== null && reading($summary) !== reading($site)) {
        $unlike[] = ['question' => $row->idnumber, 'moodle_shows' => $summary, 'site_shows' => $site];
    }
}
echo json_encode(['numerical_questions' => $tried, 'answers_marked' => $marked,
    'answers_in_micro_units' => $micro, 'not_full_marks' => $wrong,
    'correct_answer_unlike_site' => $unlike], JSON_PRETTY_PRINT | JSON_UNESCAPED_UNICODE), "\n";
