/**
 * The fuzzer's parts, on their own entry point (`@leadline/testkit/Fuzz`): it loads fast-check.
 * It reads a server's OpenAPI document, generates hostile and valid requests per operation and
 * checks every answer against the document; the testkit's own fuzz test shows them together.
 */
export * as FileBodies from "./fuzz/FileBodies.ts"
export * as OpenApiDocument from "./fuzz/OpenApiDocument.ts"
export * as RawHttp from "./fuzz/RawHttp.ts"
export * as ReplyCheck from "./fuzz/ReplyCheck.ts"
export * as RequestArbitrary from "./fuzz/RequestArbitrary.ts"
export * as RequestBuilder from "./fuzz/RequestBuilder.ts"
export * as SchemaCheck from "./fuzz/SchemaCheck.ts"
