/**
 * The Ink view: one text block, the frame `layout.ts` computed, and the terminal's own cursor placed
 * in the input (so screen readers and input methods find it). React re-renders it when the model
 * announces a change; Ink writes only the lines that differ from the last frame.
 */
import { Text, useCursor } from "ink";
import { createElement as h, type ReactElement, useSyncExternalStore } from "react";
import { layoutFrame } from "./layout.js";
import type { ChatModel } from "./model.js";
import type { RenderContext } from "./transcript.js";

export interface ChatViewProps {
  model: ChatModel;
  ctx: RenderContext;
  /** Called after each frame is laid out, with how long it took (the benchmark). */
  onFrame?: ((ms: number) => void) | undefined;
}

/** The whole screen. */
export function ChatView({ model, ctx, onFrame }: ChatViewProps): ReactElement {
  useSyncExternalStore(model.subscribe, model.snapshot);
  const started = performance.now();
  const frame = layoutFrame(model, { ...ctx, expanded: model.expanded });
  onFrame?.(performance.now() - started);
  const { setCursorPosition } = useCursor();
  setCursorPosition(frame.cursor);
  return h(Text, { wrap: "truncate-end" }, frame.lines.join("\n"));
}
