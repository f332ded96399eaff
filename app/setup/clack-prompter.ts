/** The interactive prompter: @clack/prompts on the terminal (works over SSH). Ctrl-C → `SetupCancelled`. */
import * as clack from "@clack/prompts";
import { type Prompter, SetupCancelled } from "../../core/setup.js";

function answered<T>(value: T | symbol): Exclude<T, symbol> {
  if (clack.isCancel(value)) throw new SetupCancelled();
  return value as Exclude<T, symbol>;
}

/** Builds the terminal prompter. */
export function createClackPrompter(): Prompter {
  return {
    interactive: true,
    async text(q) {
      if (q.advanced) return q.initial;
      const value = answered(
        await clack.text({
          message: q.message,
          ...(q.initial !== undefined ? { initialValue: q.initial } : {}),
          ...(q.placeholder !== undefined ? { placeholder: q.placeholder } : {}),
        }),
      );
      return value?.trim() ? value.trim() : undefined;
    },
    async password(q) {
      const value = answered(
        await clack.password({
          message: q.hasCurrent ? `${q.message} (Enter keeps the saved one)` : q.message,
        }),
      );
      return value?.trim() ? value.trim() : undefined;
    },
    async confirm(q) {
      return answered(await clack.confirm({ message: q.message, initialValue: q.initial ?? true }));
    },
    async select(q) {
      const options = q.options.map((o) => ({
        value: o.value,
        label: o.label,
        ...(o.hint ? { hint: o.hint } : {}),
      }));
      return answered(
        await clack.select({
          message: q.message,
          // clack's Option<T> is a conditional type TS cannot match to a generic T; the shape is right.
          options: options as never,
          initialValue: q.initial,
          maxItems: 12,
        }),
      ) as typeof q.initial & string;
    },
    async multiselect(q) {
      const options = q.options.map((o) => ({
        value: o.value,
        label: o.label,
        ...(o.hint ? { hint: o.hint } : {}),
      }));
      return answered(
        await clack.multiselect({
          message: q.message,
          options: options as never, // as in select()
          initialValues: q.initial ?? [],
          required: false,
        }),
      ) as NonNullable<typeof q.initial>;
    },
    say(kind, text) {
      if (kind === "ok") clack.log.success(text);
      else if (kind === "warn") clack.log.warn(text);
      else if (kind === "error") clack.log.error(text);
      else if (kind === "step") clack.log.step(text);
      else clack.log.info(text);
    },
    note(title, text) {
      clack.note(text, title);
    },
    spinner() {
      // Not clack's spinner: it holds the keyboard in raw mode and ends the process with code 0 on
      // Ctrl-C. A line per check instead, and Ctrl-C during one ends setup (nothing is written yet).
      const onInterrupt = () => {
        clack.cancel(new SetupCancelled().message);
        process.exit(130);
      };
      return {
        start: (text) => {
          clack.log.step(`${text}…`);
          process.once("SIGINT", onInterrupt);
        },
        stop: (text) => {
          process.off("SIGINT", onInterrupt);
          clack.log.success(text);
        },
        fail: (text) => {
          process.off("SIGINT", onInterrupt);
          clack.log.error(text);
        },
      };
    },
  };
}
