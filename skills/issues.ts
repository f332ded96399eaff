/** How the skills list shows the SKILL.md files that failed to load. */
import type { SkillIssue } from "./types.js";

/** `Skipped 1 broken skill:` and one line per problem (file, field, message). */
export function formatIssues(issues: readonly SkillIssue[]): string[] {
  if (issues.length === 0) return [];
  const files = new Set(issues.map((i) => i.file)).size;
  return [
    `Skipped ${files} broken skill${files === 1 ? "" : "s"}:`,
    ...issues.map((i) => `- ${i.file}: ${i.field} ${i.message}`),
  ];
}
