/**
 * The openai SDK, loaded by its first use rather than at start (the embeddings client): some 150
 * modules that a gateway does not need before its adapters poll. Later calls share the first load.
 */
type OpenAISdk = typeof import("openai");

let loading: Promise<OpenAISdk> | undefined;
let loaded: OpenAISdk | undefined;

/** Loads the SDK once. */
export function loadOpenAI(): Promise<OpenAISdk> {
  loading ??= import("openai").then((sdk) => {
    loaded = sdk;
    return sdk;
  });
  return loading;
}

/** The SDK when something loaded it already (an error of its classes can exist only then). */
export function loadedOpenAI(): OpenAISdk | undefined {
  return loaded;
}
