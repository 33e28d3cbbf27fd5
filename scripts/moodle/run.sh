#!/usr/bin/env bash
# A stage's SCORM package in a real Moodle, once, by hand (CI does not run it; its stand-in is
# tests/browser/test_moodle_types.py). On Debian, as root: installs PHP and PostgreSQL from
# Debian's packages, installs the Moodle whose code is in MOODLE_DIR (a Moodle 4.x source tree
# you provide; Moodle's installer writes its config.php there), serves it with PHP's built-in
# server on 127.0.0.1, sets up a course (setup.php), lets a student work through the package in
# Chromium (student.py: an empty box, a decimal comma, a wrong then a right answer, leaving
# half-way and coming back) and prints the grade from the gradebook (grade.php), then marks every
# numerical question of the bank with Moodle's question engine (bank.php: the right answer in each
# unit it lists, µs among them, and the correct answer Moodle shows held against the site's).
# Everything it starts is stopped on exit. Usage, from the repository, after `make build`:
#
#   MOODLE_DIR=/path/to/moodle scripts/moodle/run.sh site/scorm/<stage>.zip [BANK_XML]
#
# Without BANK_XML, the course's Moodle bank as the teacher's sheet makes it (every kind, the
# bank's seeds) is written by the CLI's `exercises export`.
set -euo pipefail
cd "$(dirname "$0")/../.."
package=${1:?usage: MOODLE_DIR=... run.sh PACKAGE_ZIP [BANK_XML]}
bank=${2:-}
moodle=$(realpath "${MOODLE_DIR:?MOODLE_DIR must name a Moodle source tree}")
[ -f "$moodle/version.php" ] || { echo "MOODLE_DIR: $moodle has no version.php" >&2; exit 2; }
work=${WORK:-$(mktemp -d)}
db_port=${DB_PORT:-8711}
web_port=${WEB_PORT:-8712}
url="http://127.0.0.1:$web_port"
python=${PYTHON:-.venv/bin/python}

export DEBIAN_FRONTEND=noninteractive
# PHP may be there without the extensions Moodle needs: ask for them, not for php alone
exts="pgsql xml mbstring curl zip gd intl soap"
have() { command -v php >/dev/null && for e in $exts; do php -m | grep -qix "$e" || return 1; done; }
have && command -v /usr/lib/postgresql/*/bin/initdb >/dev/null || {
  apt-get update -qq
  apt-get install -y -qq php-cli php-pgsql php-xml php-mbstring php-curl php-zip php-gd php-intl \
    php-soap postgresql
}
if [ -z "$bank" ]; then
  bank="$work/bank.xml"
  kinds=$(PYTHONPATH=src "$python" -c 'from allreduce_explainer.exercises import KINDS; print(",".join(KINDS))')
  seed=$(PYTHONPATH=src "$python" -c 'from allreduce_explainer.exercises.export import BANK_SEED as s, BANK_COUNT as c; print(s, c)')
  PYTHONPATH=src "$python" -m allreduce_explainer exercises export --format moodle --kinds "$kinds" \
    --seed "${seed% *}" --count "${seed#* }" --places site/banks/places.json --out "$bank" >/dev/null
fi
pgbin=$(dirname /usr/lib/postgresql/*/bin/initdb)

mkdir -p "$work/pg" "$work/data" "$work/out"
chown postgres "$work/pg" && chmod 700 "$work/pg" && chmod 777 "$work" "$work/data"
su postgres -c "$pgbin/initdb -D $work/pg -A trust -U postgres" >"$work/initdb.log"
su postgres -c "$pgbin/pg_ctl -D $work/pg -l $work/pg.log -w start \
  -o '-p $db_port -k $work -c listen_addresses=127.0.0.1'"
stop() {
  # the server's worker processes first: they outlive their parent
  [ -n "${web:-}" ] && kill $(pgrep -P "$web") "$web" 2>/dev/null
  su postgres -c "$pgbin/pg_ctl -D $work/pg -m fast stop" >/dev/null
}
trap stop EXIT
psql -h 127.0.0.1 -p "$db_port" -U postgres -qc "CREATE DATABASE moodle ENCODING 'UTF8'"

# Moodle's installer requires max_input_vars 5000; PHP's notices go to the logs, not into pages
php="php -d max_input_vars=5000 -d display_errors=0 -d log_errors=1"
$php "$moodle/admin/cli/install.php" --non-interactive --agree-license --lang=en \
  --wwwroot="$url" --dataroot="$work/data" --dbtype=pgsql --dbhost=127.0.0.1 --dbport="$db_port" \
  --dbname=moodle --dbuser=postgres --dbpass=unused --fullname="All-reduce, explained" \
  --shortname=ae --adminuser=admin --adminpass=Admin-pass-1 --adminemail=admin@example.com \
  >"$work/install.log" 2>&1
# several PHP processes, as the worker fetches Pyodide's files side by side
PHP_CLI_SERVER_WORKERS=4 $php -S "127.0.0.1:$web_port" -t "$moodle" >"$work/web.log" 2>&1 &
web=$!

$php scripts/moodle/setup.php "$moodle" "$package" "$bank" | tee "$work/made.json"
PYTHONPATH=src:. "$python" scripts/moodle/student.py "$url" "$work/made.json" "$work/out"
$php scripts/moodle/grade.php "$moodle" "$work/made.json"
PYTHONPATH=src "$python" scripts/moodle/shown.py "$bank" >"$work/shown.json"
$php scripts/moodle/bank.php "$moodle" "$work/made.json" "$work/shown.json"
echo "screenshots: $work/out"
