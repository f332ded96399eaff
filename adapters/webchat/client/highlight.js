// Colours for fenced code blocks, loaded with the first block that names its language: highlight.js's
// core and the languages listed in assets.ts. highlight.js reads the block's text and writes it back
// escaped, inside its own spans, so nothing of the text becomes markup.
import hljs from "./hljs.js";
import bash from "./hljs-bash.js";
import css from "./hljs-css.js";
import diff from "./hljs-diff.js";
import go from "./hljs-go.js";
import javascript from "./hljs-javascript.js";
import json from "./hljs-json.js";
import python from "./hljs-python.js";
import rust from "./hljs-rust.js";
import shell from "./hljs-shell.js";
import sql from "./hljs-sql.js";
import typescript from "./hljs-typescript.js";
import xml from "./hljs-xml.js";
import yaml from "./hljs-yaml.js";

const languages = { bash, css, diff, go, javascript, json, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.configure({ ignoreUnescapedHTML: true, throwUnescapedHTML: false });

/** Colours every fenced block in `root` whose language is known; the others stay plain. */
export function colour(root) {
  for (const code of root.querySelectorAll("pre code[class*='language-']:not(.hljs)")) {
    const lang = /language-([\w+-]+)/.exec(code.className)?.[1];
    if (lang && hljs.getLanguage(lang)) hljs.highlightElement(code);
  }
}
