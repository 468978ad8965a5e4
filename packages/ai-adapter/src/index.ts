export * as OpenAiCompatible from "./OpenAiCompatible.ts"
