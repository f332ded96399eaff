/**
 * Real documents built in memory for tests and benchmarks: a PDF 1.4 written by hand (Helvetica text,
 * or empty pages for the "no text layer" case) and a minimal DOCX zipped with jszip (mammoth's own
 * dependency); and compression bombs of both, small files that unpack to hundreds of megabytes,
 * compressed a megabyte at a time (never held unpacked).
 */
import { crc32, createDeflate, createDeflateRaw } from "node:zlib";
import JSZip from "jszip";

function escapePdfText(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

/**
 * A valid PDF with one page per entry; each page shows its lines, or nothing when the entry is empty
 * (an image-only scan looks the same to a text extractor).
 */
export function makePdf(pages: string[][]): Buffer {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`;
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  pages.forEach((lines, i) => {
    const pageId = 4 + i * 2;
    const body = lines.length
      ? `BT /F1 12 Tf 14 TL 72 720 Td ${lines.map((l) => `(${escapePdfText(l)}) Tj T*`).join(" ")} ET`
      : "";
    objects[pageId] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageId + 1} 0 R >>`;
    objects[pageId + 1] = `<< /Length ${Buffer.byteLength(body, "latin1")} >>\nstream\n${body}\nendstream`;
  });
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, "latin1");
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A minimal valid DOCX with one paragraph per entry. */
export async function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>`,
  );
  zip.file(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`,
  );
  const body = paragraphs
    .map((p) => `<w:p><w:r><w:t xml:space="preserve">${xmlEscape(p)}</w:t></w:r></w:p>`)
    .join("");
  zip.file(
    "word/document.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
  );
  return zip.generateAsync({ type: "nodebuffer" });
}

/** Bytes of a 1×1 PNG: a binary every sniff must refuse. */
export const TINY_PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);

/** Deflated data with the size and crc32 of what it unpacks to (a ZIP entry's fields). */
interface Deflated {
  data: Buffer;
  crc: number;
  size: number;
}

/**
 * `head`, then `megabytes` MiB of `unit` (its length must divide 1 MiB), then `tail`, through one
 * deflate stream (`raw`: no zlib header, as in a ZIP), a megabyte at a time.
 */
async function deflateRepeated(
  unit: string,
  megabytes: number,
  options: { raw: boolean; head?: string; tail?: string },
): Promise<Deflated> {
  const block = Buffer.from(unit.repeat((1024 * 1024) / unit.length));
  const deflate = options.raw ? createDeflateRaw({ level: 9 }) : createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on("data", (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.on("end", resolve));
  let crc = 0;
  let size = 0;
  const write = async (bytes: Buffer) => {
    crc = crc32(bytes, crc);
    size += bytes.length;
    if (!deflate.write(bytes)) await new Promise((resolve) => deflate.once("drain", resolve));
  };
  await write(Buffer.from(options.head ?? ""));
  for (let i = 0; i < megabytes; i++) await write(block);
  await write(Buffer.from(options.tail ?? ""));
  deflate.end();
  await ended;
  return { data: Buffer.concat(out), crc, size };
}

/** A PDF whose one page's content stream unpacks to `megabytes` MiB of spaces (about 1 KB per MiB). */
export async function makePdfBomb(megabytes: number): Promise<Buffer> {
  const { data } = await deflateRepeated(" ".repeat(64), megabytes, { raw: false });
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
  ];
  let head = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(head.length);
    head += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  offsets.push(head.length);
  head += `4 0 obj\n<< /Length ${data.length} /Filter /FlateDecode >>\nstream\n`;
  const tail = "\nendstream\nendobj\n";
  const xref = head.length + data.length + tail.length;
  const table = offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  const trailer = `xref\n0 5\n0000000000 65535 f \n${table}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), data, Buffer.from(tail + trailer, "latin1")]);
}

/** A ZIP of deflated entries, written by hand (local headers, central directory, end record). */
function zip(entries: [name: string, entry: Deflated][]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, entry] of entries) {
    const nameBytes = Buffer.from(name);
    // The fields local header and central record share, from "version needed" on.
    const shared = Buffer.alloc(26);
    shared.writeUInt16LE(20, 0); // version needed
    shared.writeUInt16LE(8, 4); // deflate
    shared.writeUInt32LE(0x00210000, 6); // 1980-01-01 00:00
    shared.writeUInt32LE(entry.crc >>> 0, 10);
    shared.writeUInt32LE(entry.data.length, 14);
    shared.writeUInt32LE(entry.size, 18);
    shared.writeUInt16LE(nameBytes.length, 22);
    const local = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), shared, nameBytes, entry.data]);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    shared.copy(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local);
    centrals.push(Buffer.concat([central, nameBytes]));
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A DOCX whose document.xml unpacks to `megabytes` MiB of one-letter paragraphs (about 1 KB per MiB). */
export async function makeDocxBomb(megabytes: number): Promise<Buffer> {
  const small = (text: string) => deflateRepeated(" ", 0, { raw: true, head: text });
  const types = `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
  const rels = `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;
  // 64 bytes, so that a whole number of them fills each MiB.
  const paragraph = "<w:p><w:r><w:t>a</w:t></w:r></w:p>".padEnd(64);
  const document = await deflateRepeated(paragraph, megabytes, {
    raw: true,
    head: `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`,
    tail: "</w:body></w:document>",
  });
  return zip([
    ["[Content_Types].xml", await small(types)],
    ["_rels/.rels", await small(rels)],
    ["word/document.xml", document],
  ]);
}
