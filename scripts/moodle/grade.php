<?php
// The student's grade for the SCORM activity, from Moodle's gradebook (grade_get_grades), and the
// last attempt's SCORM values as Moodle stored them. Usage: php grade.php MOODLE_DIR SETUP_JSON
//
// Where Moodle keeps the values: up to 4.2 one table, scorm_scoes_track (userid, scormid, attempt,
// element, value); from 4.3 three, scorm_attempt (userid, scormid, attempt), scorm_element
// (element) and scorm_scoes_value (attemptid, elementid, value): mod/scorm/db/upgrade.php, steps
// 2023042401 to 2023042403, creates them, copies the tracks over and drops scorm_scoes_track.
// The script asks the database which it has, so it reads either.

define('CLI_SCRIPT', true);
[$self, $moodle, $made] = $argv + [null, null, null];
if (!$moodle || !is_file("$moodle/config.php") || !is_file((string) $made)) {
    fwrite(STDERR, "usage: php grade.php MOODLE_DIR SETUP_JSON (what setup.php printed)\n");
    exit(2);
}
$made = json_decode(file_get_contents($made));
require("$moodle/config.php");
require_once($CFG->libdir . '/gradelib.php');

/** The SCORM values of the student's last attempt, element => value, from either schema. */
function scorm_values(moodle_database $db, int $user, int $scorm): array {
    $who = ['userid' => $user, 'scormid' => $scorm];
    if ($db->get_manager()->table_exists('scorm_attempt')) {  // Moodle 4.3 and later
        $last = $db->get_field('scorm_attempt', 'MAX(attempt)', $who);
        return $db->get_records_sql_menu(
            "SELECT e.element, v.value
               FROM {scorm_scoes_value} v
               JOIN {scorm_attempt} a ON a.id = v.attemptid
               JOIN {scorm_element} e ON e.id = v.elementid
              WHERE a.userid = :userid AND a.scormid = :scormid AND a.attempt = :attempt
           ORDER BY e.element", $who + ['attempt' => (int) $last]);
    }
    $last = $db->get_field('scorm_scoes_track', 'MAX(attempt)', $who);  // up to 4.2
    return $db->get_records_menu('scorm_scoes_track', $who + ['attempt' => (int) $last],
        'element', 'element, value');
}

$grades = grade_get_grades($made->course, 'mod', 'scorm', $made->scorm, $made->student);
$item = $grades->items[0];
$grade = $item->grades[$made->student];
$schema = $DB->get_manager()->table_exists('scorm_attempt') ? 'scorm_attempt' : 'scorm_scoes_track';
echo json_encode(['gradebook' => ['item' => $item->name, 'grade' => $grade->grade, 'max' => $item->grademax,
    'shown' => $grade->str_grade], 'tables' => $schema,
    'scorm' => scorm_values($DB, (int) $made->student, (int) $made->scorm)],
    JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
