<?php
// The student's grade for the SCORM activity, from Moodle's gradebook (grade_get_grades), and the
// attempt's SCORM values as Moodle stored them. Usage: php grade.php MOODLE_DIR SETUP_JSON

define('CLI_SCRIPT', true);
[$self, $moodle, $made] = $argv + [null, null, null];
if (!$moodle || !is_file("$moodle/config.php") || !is_file((string) $made)) {
    fwrite(STDERR, "usage: php grade.php MOODLE_DIR SETUP_JSON (what setup.php printed)\n");
    exit(2);
}
$made = json_decode(file_get_contents($made));
require("$moodle/config.php");
require_once($CFG->libdir . '/gradelib.php');

$grades = grade_get_grades($made->course, 'mod', 'scorm', $made->scorm, $made->student);
$item = $grades->items[0];
$grade = $item->grades[$made->student];
$tracks = $DB->get_records_menu('scorm_scoes_track', ['userid' => $made->student, 'scormid' => $made->scorm],
    'element', 'element, value');
echo json_encode(['gradebook' => ['item' => $item->name, 'grade' => $grade->grade, 'max' => $item->grademax,
    'shown' => $grade->str_grade], 'scorm' => $tracks], JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES), "\n";
