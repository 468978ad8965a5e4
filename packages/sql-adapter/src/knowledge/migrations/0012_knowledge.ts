import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migration from "../../Migration.ts"

/**
 * The knowledge base (docs/contract-commerce-ai.md §4). Each chunk carries its source's text-search
 * configuration, so its `tsv` is built (and searched) with the source's language; the GIN index
 * serves the search's `tsv @@ query`. Chunks go with their source.
 */
export const migration = Migration.make(
  "0012_knowledge",
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE knowledge_sources (
      account_id uuid NOT NULL REFERENCES accounts (id),
      id text NOT NULL,
      kind text NOT NULL,
      title text NOT NULL,
      url text,
      language text NOT NULL,
      status text NOT NULL,
      error text,
      content text NOT NULL,
      char_count integer NOT NULL,
      chunk_count integer NOT NULL,
      content_sha256 text,
      embedding_status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, id)
    )`
    yield* sql`CREATE INDEX knowledge_sources_newest_first ON knowledge_sources (account_id, created_at DESC, id DESC)`
    yield* sql`CREATE TABLE knowledge_chunks (
      account_id uuid NOT NULL,
      id text NOT NULL,
      source_id text NOT NULL,
      position integer NOT NULL,
      heading text,
      text text NOT NULL,
      language regconfig NOT NULL,
      tsv tsvector GENERATED ALWAYS AS (to_tsvector(language, text)) STORED,
      PRIMARY KEY (account_id, id),
      FOREIGN KEY (account_id, source_id) REFERENCES knowledge_sources (account_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX knowledge_chunks_by_source ON knowledge_chunks (account_id, source_id, position)`
    yield* sql`CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv)`
  })
)
