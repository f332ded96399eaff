/**
 * An MCP tool result as the agent loop understands it: text for the model, with images and binary
 * resources saved as files (in a folder the caller gives) and named in the text.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A converted result: text for the model, files saved, whether the server flagged an error. */
export interface ConvertedResult {
  text: string;
  files: { path: string; mimeType?: string }[];
  isError: boolean;
}

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "audio/wav": "wav",
  "audio/mpeg": "mp3",
  "application/pdf": "pdf",
  "application/gzip": "gz",
};

/**
 * Saves one file of a result: `path` is a copy on this host the reply may send, `shownAs` the name the
 * model is given (in a workspace: as its commands see it).
 */
export interface FileSink {
  save(name: string, bytes: Uint8Array): Promise<{ path: string; shownAs: string }>;
}

/** Where binary parts go, resolved only when a result has one. */
export type SaveTarget = () => Promise<FileSink>;

/**
 * Converts `result`. Binary parts (images, audio, blob resources) are written under `saveTo`'s folder
 * when it is given, else only described. Structured content is added as JSON when there is no text.
 */
export async function convertResult(
  result: CallToolResult,
  saveTo: SaveTarget | undefined,
  prefix = "mcp",
): Promise<ConvertedResult> {
  const parts: string[] = [];
  const files: ConvertedResult["files"] = [];
  let n = 0;
  let target: Promise<FileSink> | undefined;
  const save = async (base64: string, mimeType: string | undefined): Promise<string | undefined> => {
    if (!saveTo) return undefined;
    target ??= saveTo();
    const sink = await target;
    const ext = (mimeType && EXTENSIONS[mimeType]) ?? "bin";
    const name = `${prefix}-${Date.now()}-${++n}.${ext}`;
    const { path, shownAs } = await sink.save(name, Buffer.from(base64, "base64"));
    files.push({ path, ...(mimeType ? { mimeType } : {}) });
    return shownAs;
  };
  for (const part of result.content ?? []) {
    switch (part.type) {
      case "text":
        parts.push(part.text);
        break;
      case "image":
      case "audio": {
        const path = await save(part.data, part.mimeType);
        const size = Math.round((part.data.length * 3) / 4);
        parts.push(
          path
            ? `[${part.type} ${part.mimeType}, ${size} bytes, saved to ${path}]`
            : `[${part.type} ${part.mimeType}, ${size} bytes]`,
        );
        break;
      }
      case "resource": {
        const r = part.resource;
        if ("text" in r && typeof r.text === "string") parts.push(`[resource ${r.uri}]\n${r.text}`);
        else if ("blob" in r && typeof r.blob === "string") {
          const path = await save(r.blob, r.mimeType);
          parts.push(`[resource ${r.uri} (${r.mimeType ?? "binary"})${path ? `, saved to ${path}` : ""}]`);
        }
        break;
      }
      case "resource_link":
        parts.push(
          `[resource link ${part.uri}${part.name ? ` "${part.name}"` : ""}${part.description ? `: ${part.description}` : ""}] (read it with mcp_read_resource)`,
        );
        break;
      default:
        parts.push(`[${(part as { type: string }).type} content]`);
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent, null, 2));
  return { text: parts.join("\n") || "(no output)", files, isError: result.isError === true };
}
