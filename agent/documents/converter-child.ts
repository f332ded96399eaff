/**
 * The process that turns one PDF or DOCX into text (started by `convert-process.ts`): the document's
 * bytes on stdin, `pdf|docx <maxChars>` as arguments, one JSON answer on stdout. It runs apart from the
 * gateway because a converter's memory follows what the file unpacks to, not its size: a 300 KB PDF
 * or a 1 MB DOCX can unpack to gigabytes. The text it answers with is cut near `maxChars`.
 */
import { readDocxText } from "./docx.js";
import { readPdfText } from "./pdf.js";

/** What the child answers. */
export type ConverterAnswer =
  | { ok: true; kind: "pdf"; pageTexts: string[]; pageCount: number; stoppedEarly: boolean }
  | { ok: true; kind: "docx"; text: string; totalChars: number; warnings: string[] }
  | { ok: false; message: string };

async function convert(kind: string, bytes: Buffer, maxChars: number): Promise<ConverterAnswer> {
  if (kind === "pdf") {
    const pdf = await readPdfText(bytes, maxChars);
    // One page may hold more than the whole budget: it is cut too (one character over, to show the cut).
    let budget = maxChars + 1;
    const pageTexts = pdf.pageTexts.map((text) => {
      const kept = text.slice(0, Math.max(0, budget));
      budget -= kept.length;
      return kept;
    });
    return { ok: true, kind, pageTexts, pageCount: pdf.pageCount, stoppedEarly: pdf.stoppedEarly };
  }
  const docx = await readDocxText(bytes);
  const text = docx.text.replace(/\n{3,}/g, "\n\n").trim();
  return {
    ok: true,
    kind: "docx",
    text: text.slice(0, maxChars + 1),
    totalChars: text.length,
    warnings: docx.warnings,
  };
}

async function main(): Promise<void> {
  const [kind = "", maxChars = "0"] = process.argv.slice(2);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let answer: ConverterAnswer;
  try {
    answer = await convert(kind, Buffer.concat(chunks), Number(maxChars));
  } catch (err) {
    answer = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  process.stdout.write(JSON.stringify(answer), () => process.exit(0));
}

void main();
