/**
 * The non-interactive prompter (`herald setup --non-interactive`): every question is answered from a
 * map built from flags and environment variables. An unanswered question takes its `initial` value
 * (the current setting), a select with a "skip" choice skips, and nothing waits for a person.
 */
import { type Answers, CheckFailed, type Prompter } from "../../core/setup.js";

/** Builds the prompter; lines go to `out`. */
export function createFlagsPrompter(answers: Answers, out: NodeJS.WritableStream = process.stdout): Prompter {
  const str = (key: string) => {
    const v = answers[key];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const mark = { info: "·", ok: "✓", warn: "!", error: "✗", step: "◆" } as const;
  return {
    interactive: false,
    async text(q) {
      return str(q.key) ?? q.initial;
    },
    async password(q) {
      return str(q.key);
    },
    async confirm(q) {
      const v = answers[q.key];
      return typeof v === "boolean"
        ? v
        : v !== undefined
          ? ["1", "true", "yes", "on"].includes(String(v))
          : (q.initial ?? false);
    },
    async select<T extends string>(q: { key: string; options: { value: T }[]; initial?: T }): Promise<T> {
      const v = str(q.key);
      const values: string[] = q.options.map((o) => o.value);
      if (v !== undefined) {
        if (!values.includes(v))
          throw new CheckFailed(`'${v}' is not a choice for ${q.key}; choose one of: ${values.join(", ")}.`);
        return v as T; // one of the options, checked above
      }
      if (values.includes("skip")) return "skip" as T;
      return q.initial ?? q.options[0]!.value;
    },
    async multiselect(q) {
      const v = answers[q.key];
      const list = Array.isArray(v) ? v : typeof v === "string" && v ? v.split(",") : [];
      const values = q.options.map((o) => o.value as string);
      const bad = list.find((x) => !values.includes(x));
      if (bad)
        throw new CheckFailed(`'${bad}' is not a choice for ${q.key}; choose from: ${values.join(", ")}.`);
      return list as never; // each one of the options' values, checked above
    },
    say(kind, text) {
      out.write(`${mark[kind]} ${text}\n`);
    },
    note(title, text) {
      out.write(`${title}:\n${text.replace(/^/gm, "  ")}\n`);
    },
    spinner() {
      return {
        start: () => {},
        stop: (text: string) => void out.write(`✓ ${text}\n`),
        fail: (text: string) => void out.write(`✗ ${text}\n`),
      };
    },
  };
}
