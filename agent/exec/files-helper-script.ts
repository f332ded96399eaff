/**
 * The file helper's program: plain JavaScript that `node -e` runs inside the sandbox, as the sandbox's
 * user, with the workspace at its root. It answers one request at a time on stdin/stdout:
 *
 *   request  = a JSON line {id, op, path, …, bytes?} then `bytes` raw bytes of payload
 *   response = a JSON line {id, ok, …, bytes?} then `bytes` raw bytes (a read's data)
 *
 * ops: `stat {path}`; `read {path, offset, length}`; `write {path, mode?, more}` + payload, continued
 * by `chunk {more, abort?}` frames until `more` is false (then the file is renamed into place). A failed
 * op answers `{ok: false, code, message}` (errno codes; `EOUTSIDE` for a real path out of the root).
 * It exits at the end of stdin. Paths resolve under the root with symbolic links followed; inside the
 * sandbox the host is not mounted, so a link can only lead to what the sandbox itself shows.
 */
/** The helper's source, for `node -e <source> <root>` (see the module comment for its protocol). */
export const FILES_HELPER_SOURCE = String.raw`"use strict";
const fs = require("fs"), path = require("path");
const ROOT = process.argv[1] || "/workspace";
let chunks = [], have = 0, header = null, writing = null, seq = 0;
function out(buf) {
  let off = 0;
  while (off < buf.length) {
    try { off += fs.writeSync(1, buf, off); }
    catch (e) { if (e.code !== "EAGAIN") throw e; }
  }
}
function reply(obj, data) {
  if (data) obj.bytes = data.length;
  const line = Buffer.from(JSON.stringify(obj) + "\n");
  out(data ? Buffer.concat([line, data]) : line);
}
function fail(id, e) { reply({ id, ok: false, code: e.code || "EIO", message: String(e.message || e), real: e.real }); }
function inside(p) { return p === ROOT || p.startsWith(ROOT + "/"); }
function missing(e) { return e.code === "ENOENT" || e.code === "ENOTDIR"; }
function real(abs, links) {
  const tail = [];
  let head = abs;
  for (;;) {
    try { return path.join(fs.realpathSync(head), ...tail); } catch (e) { if (!missing(e)) throw e; }
    let link = null;
    try { if (fs.lstatSync(head).isSymbolicLink()) link = fs.readlinkSync(head); } catch (e) { if (!missing(e)) throw e; }
    if (link !== null) {
      if (links >= 40) throw Object.assign(new Error("too many levels of symbolic links"), { code: "ELOOP" });
      return real(path.join(path.resolve(path.dirname(head), link), ...tail), links + 1);
    }
    const parent = path.dirname(head);
    if (parent === head) return path.join(head, ...tail);
    tail.unshift(path.basename(head));
    head = parent;
  }
}
function resolve(rel) {
  const abs = path.resolve(ROOT, rel);
  const r = real(abs, 0);
  if (!inside(abs) || !inside(r)) throw Object.assign(new Error("outside the workspace"), { code: "EOUTSIDE", real: r });
  return r;
}
function stat(h) {
  let s;
  try { s = fs.statSync(resolve(h.path)); } catch (e) { if (missing(e)) return reply({ id: h.id, ok: true, missing: true }); throw e; }
  const kind = s.isFile() ? "file" : s.isDirectory() ? "directory" : "other";
  reply({ id: h.id, ok: true, kind, size: s.size, mode: s.mode & 0o7777, mtimeMs: s.mtimeMs });
}
function read(h) {
  // Never blocks on a FIFO a command left there, and reads regular files only.
  const fd = fs.openSync(resolve(h.path), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const s = fs.fstatSync(fd);
    if (s.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    if (!s.isFile()) throw Object.assign(new Error("not a regular file"), { code: "ENOTREG" });
    const buf = Buffer.allocUnsafe(h.length);
    const n = fs.readSync(fd, buf, 0, h.length, h.offset);
    reply({ id: h.id, ok: true }, buf.subarray(0, n));
  } finally { fs.closeSync(fd); }
}
function startWrite(h) {
  const target = resolve(h.path);
  let before = null;
  try { before = fs.statSync(target); } catch (e) { if (!missing(e)) throw e; }
  if (before && before.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const tmp = path.join(path.dirname(target), "." + path.basename(target) + "." + process.pid + "." + (seq++) + ".tmp");
  const mode = before ? before.mode & 0o7777 : (h.mode || 0o644);
  writing = { id: h.id, target, tmp, fd: fs.openSync(tmp, "wx", mode), mode, before, written: 0, error: null };
}
function writeChunk(body) {
  if (writing.error) return;
  let off = 0;
  while (off < body.length) off += fs.writeSync(writing.fd, body, off);
  writing.written += body.length;
}
function endWrite(abort) {
  const w = writing;
  writing = null;
  try {
    if (!w.error && !abort) {
      fs.fchmodSync(w.fd, w.mode);
      fs.fdatasyncSync(w.fd);
    }
  } catch (e) { w.error = e; }
  if (w.fd !== null) fs.closeSync(w.fd);
  if (w.error || abort) {
    if (w.tmp) try { fs.unlinkSync(w.tmp); } catch {}
    if (abort) return reply({ id: w.id, ok: false, code: "EABORTED", message: "the write was abandoned" });
    return fail(w.id, w.error);
  }
  try { fs.renameSync(w.tmp, w.target); } catch (e) { try { fs.unlinkSync(w.tmp); } catch {} return fail(w.id, e); }
  reply({ id: w.id, ok: true, created: !w.before, previousBytes: w.before ? w.before.size : 0, writtenBytes: w.written });
}
function handle(h, body) {
  if (h.op === "chunk") {
    if (!writing) return;
    try { writeChunk(body); } catch (e) { writing.error = e; }
    if (!h.more || h.abort) endWrite(Boolean(h.abort));
    return;
  }
  try {
    if (h.op === "stat") return stat(h);
    if (h.op === "read") return read(h);
    if (h.op === "write") {
      try { startWrite(h); } catch (e) { writing = { id: h.id, fd: null, tmp: null, error: e }; }
      try { writeChunk(body); } catch (e) { writing.error = e; }
      if (!h.more) endWrite(false);
      return;
    }
    throw Object.assign(new Error("unknown op " + h.op), { code: "EINVAL" });
  } catch (e) { fail(h.id, e); }
}
function pump() {
  for (;;) {
    if (!header) {
      const joined = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const nl = joined.indexOf(10);
      chunks = [joined];
      if (nl < 0) return;
      header = JSON.parse(joined.subarray(0, nl).toString("utf8"));
      chunks = [joined.subarray(nl + 1)];
      have = chunks[0].length;
    }
    const need = header.bytes || 0;
    if (have < need) return;
    const joined = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const h = header;
    header = null;
    chunks = [joined.subarray(need)];
    have = chunks[0].length;
    handle(h, joined.subarray(0, need));
  }
}
process.stdin.on("data", (c) => { chunks.push(c); have += c.length; pump(); });
process.stdin.on("end", () => process.exit(0));
`;
