// @ts-check
// A sample Herald plugin: one tool (note_add), one command (/notes) and one hook (beforeToolCall).
// Copy this folder to HERALD_HOME/plugins/notes/ and restart the gateway (or send /reload-plugins).
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin, defineTool, z } from "herald/plugin";

/** @param {string | undefined} dir */
const notesFile = (dir) => (dir ? join(dir, "notes.md") : undefined);

export default definePlugin({
  tools: [
    defineTool({
      name: "note_add",
      description: "Write a short note to the user's notebook (they read it with /notes).",
      parameters: z.object({ text: z.string().min(1).max(500).describe("the note, one line") }),
      label: ({ text }) => `📝 ${text}`,
      async execute({ text }, ctx) {
        // `filesystem` gives the plugin a data folder of its own; without it, say why.
        const file = notesFile(ctx.dataDir);
        if (!file) return { content: `cannot write notes: ${ctx.refused("filesystem")}`, isError: true };
        appendFileSync(file, `- ${text.replace(/\s+/g, " ").trim()}\n`);
        return `Noted: ${text}`;
      },
    }),
  ],
  commands: {
    notes: {
      description: "show the notebook",
      run: ({ dataDir }) => {
        const file = notesFile(dataDir);
        if (!file || !existsSync(file)) return "The notebook is empty.";
        return `Notes:\n${readFileSync(file, "utf8").trim()}`;
      },
    },
  },
  hooks: {
    // Filters run before every tool call, the plugin's own and others'.
    beforeToolCall({ tool, args }) {
      if (tool !== "note_add") return undefined;
      const text = String(/** @type {{ text?: unknown }} */ (args)?.text ?? "");
      if (/password|passwd|api[_ -]?key/i.test(text)) {
        return { block: "notes must not hold passwords or keys; ask the user to use a password manager" };
      }
      return undefined;
    },
  },
});
