/**
 * Recognises the audio containers OpenAI-compatible transcription accepts by their first bytes, so a
 * voice note is sent as it is (under its true extension) even without ffprobe.
 */
import { open } from "node:fs/promises";

/** A container providers accept, with the file name extension and MIME type it is sent under. */
export interface SendableFormat {
  ext: "ogg" | "mp3" | "m4a" | "wav" | "flac" | "webm";
  mime: string;
}

const FORMATS: Record<SendableFormat["ext"], string> = {
  ogg: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  wav: "audio/wav",
  flac: "audio/flac",
  webm: "audio/webm",
};

/** The format of `head` (the file's first bytes), or `undefined` when providers may not accept it. */
export function sniffFormat(head: Uint8Array): SendableFormat | undefined {
  const ascii = (from: number, to: number) => Buffer.from(head.subarray(from, to)).toString("latin1");
  let ext: SendableFormat["ext"] | undefined;
  if (ascii(0, 4) === "OggS") ext = "ogg";
  else if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE") ext = "wav";
  else if (ascii(0, 4) === "fLaC") ext = "flac";
  // MP4/M4A, but not 3GPP (often AMR audio, which providers refuse) nor QuickTime.
  else if (ascii(4, 8) === "ftyp" && !/^(3g|qt)/.test(ascii(8, 12))) ext = "m4a";
  else if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) ext = "webm";
  // An ID3 tag, or an MPEG audio frame sync (11 set bits) with layer III.
  else if (ascii(0, 3) === "ID3") ext = "mp3";
  else if (head[0] === 0xff && ((head[1] ?? 0) & 0xe6) === 0xe2) ext = "mp3";
  return ext ? { ext, mime: FORMATS[ext] } : undefined;
}

/** Reads the first bytes of `path` and sniffs them. */
export async function sniffFile(path: string): Promise<SendableFormat | undefined> {
  const file = await open(path, "r");
  try {
    const head = new Uint8Array(16);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return sniffFormat(head.subarray(0, bytesRead));
  } finally {
    await file.close();
  }
}
