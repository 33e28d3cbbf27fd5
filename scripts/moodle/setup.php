<?php
// A course in a freshly installed Moodle, as a teacher would set it up, through Moodle's own PHP
// API (its data generator and its Moodle XML importer): a course, a student enrolled in it, the
// question bank imported into the course's bank, and a stage's SCORM package as an activity graded
// by its highest score. Prints what it made as JSON for student.py.
//
// Usage: php setup.php MOODLE_DIR PACKAGE_ZIP BANK_XML

define('CLI_SCRIPT', true);
[$self, $moodle, $package, $bank] = $argv + [null, null, null, null];
if (!$moodle || !is_file("$moodle/config.php") || !is_file((string) $package) || !is_file((string) $bank)) {
    fwrite(STDERR, "usage: php setup.php MOODLE_DIR PACKAGE_ZIP BANK_XML (an installed Moodle, a SCORM zip, a Moodle XML bank)\n");
    exit(2);
}
$package = realpath($package);
$bank = realpath($bank);
require("$moodle/config.php");
require_once($CFG->libdir . '/testing/generator/lib.php');
require_once($CFG->libdir . '/questionlib.php');
require_once($CFG->dirroot . '/question/format/xml/format.php');
require_once($CFG->dirroot . '/mod/scorm/locallib.php');

\core\session\manager::set_user(get_admin());
$generator = new testing_data_generator();

$course = $generator->create_course(['fullname' => 'All-reduce, explained', 'shortname' => 'allreduce-course']);
$student = $generator->create_user(['username' => 'student', 'password' => 'Student-pass-1',
    'firstname' => 'Sam', 'lastname' => 'Student']);
$generator->enrol_user($student->id, $course->id, 'student');

// The bank, into the course's default question category, as the import page does.
$context = context_course::instance($course->id);
$category = question_make_default_categories([$context]);
$format = new qformat_xml();
$format->setCategory($category);
$format->setContexts([$context]);
$format->setCourse($course);
$format->setFilename($bank);
$format->setRealfilename(basename($bank));
$format->setMatchgrades('error');
$format->setCatfromfile(true);
$format->setContextfromfile(true);
$format->setStoponerror(true);
ob_start();  // the importer prints an HTML report
$imported = $format->importpreprocess() && $format->importprocess() && $format->importpostprocess();
ob_end_clean();
if (!$imported) {
    fwrite(STDERR, "the bank did not import\n");
    exit(1);
}
$questions = $DB->count_records_sql(
    'SELECT COUNT(1) FROM {question} q JOIN {question_versions} v ON v.questionid = q.id
       JOIN {question_bank_entries} e ON e.id = v.questionbankentryid
       JOIN {question_categories} c ON c.id = e.questioncategoryid
      WHERE c.contextid = ? AND q.parent = 0', [$context->id]);

// The package, from a draft file as the activity form uploads it.
$draft = file_get_unused_draft_itemid();
get_file_storage()->create_file_from_pathname(['contextid' => context_user::instance(get_admin()->id)->id,
    'component' => 'user', 'filearea' => 'draft', 'itemid' => $draft, 'filepath' => '/',
    'filename' => basename($package)], $package);
$scorm = $generator->create_module('scorm', ['course' => $course->id, 'name' => 'Stage 1 (SCORM)',
    'packagefile' => $draft, 'grademethod' => GRADEHIGHEST, 'maxgrade' => 100, 'skipview' => 2]);

echo json_encode(['course' => (int) $course->id, 'student' => (int) $student->id,
    'scorm' => (int) $scorm->id, 'cmid' => (int) $scorm->cmid, 'questions' => $questions]), "\n";
