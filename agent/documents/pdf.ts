/** The text of a PDF, page by page, through unpdf (PDF.js). Loaded on first use. */

/** Text of the pages read, and the page count. */
export interface PdfText {
  pageTexts: string[];
  pageCount: number;
  /** True when reading stopped before the last page because `maxChars` was reached. */
  stoppedEarly: boolean;
}

/**
 * Reads the text layer of each page until `maxChars` characters are collected.
 * Throws what PDF.js throws for a damaged file; rejects with the signal's reason between pages.
 */
export async function readPdfText(
  bytes: Uint8Array,
  maxChars: number,
  signal?: AbortSignal,
): Promise<PdfText> {
  const { getDocumentProxy } = await import("unpdf");
  signal?.throwIfAborted();
  // PDF.js may transfer (detach) the buffer it is given: hand it a copy. verbosity 0 keeps its warnings
  // about damaged fonts off stdout.
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  try {
    const pageTexts: string[] = [];
    let chars = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      signal?.throwIfAborted();
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if ("str" in item) text += item.str + (item.hasEOL ? "\n" : "");
      }
      page.cleanup();
      pageTexts.push(text.trim());
      chars += text.length;
      if (chars > maxChars && n < pdf.numPages)
        return { pageTexts, pageCount: pdf.numPages, stoppedEarly: true };
    }
    return { pageTexts, pageCount: pdf.numPages, stoppedEarly: false };
  } finally {
    await pdf.loadingTask.destroy();
  }
}
