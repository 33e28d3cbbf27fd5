"""The types Moodle serves a SCORM package's files under, so that the site can be built to start
there and tested as Moodle serves it.

Moodle stores each file of an unzipped package with a type from its own table of extensions
(moodle/moodle lib/classes/filetypes.php, core_filetypes::get_default_types(); in 4.1.10 the
entry 'xxx' at line 49 is the default, 'js' is line 147) and sends it with that type
(lib/filelib.php: send_stored_file() takes $stored_file->get_mimetype(), readfile_accel() writes
it as Content-Type). For an extension the table lacks (.mjs, .wasm, .bin) it asks PHP's finfo
(lib/filestorage/file_storage.php, mimetype() then mimetype_from_file()) and keeps the answer only
if the table lists that type, else document/unknown. A real Moodle 4.1.10 served the site's .wasm
and .bin as application/octet-stream (finfo's word for binary data, listed for 'dmg'), and finfo
calls the old .mjs files text/plain, text/x-Algol68 or text/x-script.python: none is a JavaScript
type, so a browser refuses such a file as a module script, and WebAssembly under any type but
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
UNKNOWN = "document/unknown"  # the 'xxx' entry
BINARY = "application/octet-stream"  # finfo's type for binary data, which the table lists

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


def moodle_type(name: str, content: bytes = b"") -> str:
    """The Content-Type Moodle sends a package's file under: by its name's last extension (matched
    case-insensitively, as Moodle's mimeinfo() does), else by its content as finfo sees it:
    binary data (a NUL byte in the first 8 KiB) as application/octet-stream, text as
    document/unknown (finfo's text/plain would be kept, its text/x-... types not)."""
    known = TYPES.get(PurePosixPath(name).suffix[1:].lower())
    if known is not None:
        return known
    return BINARY if b"\0" in content[:8192] else UNKNOWN
