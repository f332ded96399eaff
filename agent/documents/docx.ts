/** The raw text of a Word (.docx) document through mammoth. Loaded on first use. */

/** Text and the converter's warnings. Throws what mammoth throws for a damaged file. */
export async function readDocxText(bytes: Uint8Array): Promise<{ text: string; warnings: string[] }> {
  const { default: mammoth } = await import("mammoth");
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result = await mammoth.extractRawText({ buffer });
  return { text: result.value, warnings: result.messages.map((m) => m.message) };
}
