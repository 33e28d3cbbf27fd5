"""The types Moodle serves a SCORM package's files under, so that the site can be built to start
there and tested as Moodle serves it.

Moodle stores each file of an unzipped package with a type from its own table of extensions
(moodle/moodle lib/classes/filetypes.php, core_filetypes::get_default_types(); in 4.1.10 the
entry 'xxx' at line 49 is the default, 'js' is line 147) and sends it with that type
(lib/filelib.php: send_stored_file() takes $stored_file->get_mimetype(), readfile_accel() writes
it as Content-Type). An extension the table lacks gets document/unknown; Moodle first asks PHP's
finfo (lib/filestorage/file_storage.php, mimetype() then mimetype_from_file()) and keeps its answer
only if the table lists that type, so a .mjs may also come as text/plain. Neither is a JavaScript
type, so a browser refuses it as a module script; and WebAssembly under any type but
application/wasm cannot be compiled as it streams in.
"""

from __future__ import annotations

from pathlib import PurePosixPath

# Moodle's entries for the extensions a built site uses (copied from get_default_types()).
TYPES = {
    "css": "text/css",
    "gif": "image/gif",
    "gz": "application/g-zip",
    "htm": "text/html",
    "html": "text/html",
    "ico": "image/vnd.microsoft.icon",
    "jpg": "image/jpeg",
    "js": "application/x-javascript",
    "json": "application/json",
    "png": "image/png",
    "svg": "image/svg+xml",
    "tar": "application/x-tar",
    "txt": "text/plain",
    "xml": "application/xml",
    "zip": "application/zip",
}
UNKNOWN = "document/unknown"  # the 'xxx' entry: any extension the table lacks (.mjs, .wasm, .bin)

# The JavaScript MIME type essences of the WHATWG MIME Sniffing standard (section 4.6): the types
# under which a browser runs a module script or a worker's module.
JAVASCRIPT = frozenset(
    f"{top}/{sub}"
    for top, subs in {
        "application": ("ecmascript", "javascript", "x-ecmascript", "x-javascript"),
        "text": (
            "ecmascript",
            "javascript",
            "javascript1.0",
            "javascript1.1",
            "javascript1.2",
            "javascript1.3",
            "javascript1.4",
            "javascript1.5",
            "jscript",
            "livescript",
            "x-ecmascript",
            "x-javascript",
        ),
    }.items()
    for sub in subs
)


def moodle_type(name: str) -> str:
    """The Content-Type Moodle sends a package's file under, by its name's last extension
    (Moodle's mimeinfo() matches the extension case-insensitively)."""
    return TYPES.get(PurePosixPath(name).suffix[1:].lower(), UNKNOWN)
