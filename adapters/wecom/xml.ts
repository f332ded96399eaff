/**
 * WeCom's callback XML, read with a tight pattern for its fixed, flat fields (`<Name><![CDATA[v]]></Name>`
 * or `<Name>v</Name>` directly under `<xml>`): no XML parser is installed, and these bodies have no
 * nesting, attributes or entities beyond the five XML ones. Also the one XML Herald writes: the
 * encrypted reply envelope is never needed (replies go through the API), so nothing else is built.
 */

const ENTITIES: Record<string, string> = {
  "&lt;": "<",
  "&gt;": ">",
  "&amp;": "&",
  "&quot;": '"',
  "&apos;": "'",
};

/** The text of the first `<name>` element, or undefined. */
export function xmlField(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>\\s*(?:<!\\[CDATA\\[([\\s\\S]*?)\\]\\]>|([^<]*))\\s*</${name}>`).exec(
    xml,
  );
  if (!match) return undefined;
  return match[1] ?? match[2]?.replace(/&(lt|gt|amp|quot|apos);/g, (e) => ENTITIES[e] ?? e);
}

/** Whether the text is an `<xml>` document at all. */
export const looksLikeXml = (text: string): boolean => /^\s*<xml>[\s\S]*<\/xml>\s*$/.test(text);
