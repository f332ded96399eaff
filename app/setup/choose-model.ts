/** The model question of the model step: one of the listed models, or a name typed when none are listed. */
import { CheckFailed, type StepContext } from "../../core/setup.js";

/** The model to use: chosen from `models`, else typed; a name the endpoint does not list is refused. */
export async function chooseModel(
  ctx: StepContext,
  models: string[],
  current: string | undefined,
): Promise<string | undefined> {
  const { p } = ctx;
  if (!models.length) return p.text({ key: "model.name", message: "Model name", initial: current });
  if (!p.interactive) {
    const given = await p.text({ key: "model.name", message: "Model name", initial: undefined });
    const name = given ?? (current && models.includes(current) ? current : models[0]);
    if (given && !models.includes(given)) {
      throw new CheckFailed(
        `The endpoint does not serve the model '${given}'; it serves: ${models.slice(0, 20).join(", ")}.`,
      );
    }
    return name;
  }
  return p.select({
    key: "model.name",
    message: "Which model?",
    options: models.map((m) => ({ value: m, label: m })),
    initial: current && models.includes(current) ? current : models[0],
  });
}
