/** Splitting text for speech synthesis: pieces under the provider's input limit, cut between sentences. */

// Built on first use: loading the ICU sentence rules costs milliseconds at start for a voice reply
// that may never come.
let sentenceSegmenter: Intl.Segmenter | undefined;

/**
 * Splits `text` into pieces of at most `maxChars` characters, packing whole sentences greedily (so each
 * piece is read with natural intonation). A sentence longer than `maxChars` is cut between words, and a
 * word longer than that is cut anywhere. Whitespace-only input gives `[]`.
 */
export function splitForSpeech(text: string, maxChars: number): string[] {
  if (maxChars < 1) throw new RangeError("maxChars must be at least 1");
  const pieces: string[] = [];
  let current = "";
  const flush = () => {
    const piece = current.trim();
    if (piece) pieces.push(piece);
    current = "";
  };
  sentenceSegmenter ??= new Intl.Segmenter(undefined, { granularity: "sentence" });
  for (const { segment } of sentenceSegmenter.segment(text)) {
    for (const part of segment.length > maxChars ? cutLong(segment, maxChars) : [segment]) {
      if (current.length + part.length > maxChars) flush();
      current += part;
    }
  }
  flush();
  return pieces;
}

/** Cuts one over-long sentence between words; words over `maxChars` are cut where they must be. */
function cutLong(sentence: string, maxChars: number): string[] {
  const out: string[] = [];
  for (const word of sentence.split(/(?<=\s)/)) {
    for (let i = 0; i < word.length; i += maxChars) out.push(word.slice(i, i + maxChars));
  }
  return out;
}
