import { join, resolve } from "node:path"
import { Context, Effect, Layer, type Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migrations from "./Migrations.ts"
import * as Notifications from "./Notifications.ts"
import * as PgliteClient from "./PgliteClient.ts"
import type * as PgliteTemplate from "./PgliteTemplate.ts"
import * as PgServerClient from "./PgServerClient.ts"
import * as WalFlush from "./WalFlush.ts"

export interface Config {
  /** A PostgreSQL server; unset means the embedded PGlite database in `dataDir`. */
  readonly url?: Redacted.Redacted<string> | undefined
  readonly dataDir: string
  /** A schema to use instead of `public` on a server database (tests use a fresh one each). */
  readonly schema?: string | undefined
  /** Pool size for a server database. */
  readonly maxConnections?: number | undefined
}

/** Which database is in use, and a cheap check that it answers (for `/readyz`). */
export class Database extends Context.Service<
  Database,
  {
    readonly kind: "postgres" | "pglite"
    readonly ping: Effect.Effect<boolean>
  }
>()("sql-adapter/Database") {}

const info = (kind: "postgres" | "pglite") =>
  Layer.effect(
    Database,
    Effect.map(SqlClient.SqlClient, (sql) =>
      Database.of({
        kind,
        ping: sql`SELECT 1`.pipe(
          Effect.as(true),
          Effect.timeout("2 seconds"),
          Effect.catchCause(() => Effect.succeed(false))
        )
      })
    )
  )

/** A `dataDir` that keeps the embedded database in memory (tests). */
export const MEMORY = ":memory:"

export const pgliteDirectory = (dataDir: string) => join(resolve(dataDir), "pglite")

/**
 * The SQL client (and LISTEN) for the configured database, without migrations. `template`: what a new
 * embedded database starts from, `migrated` where the migrations run next (`PgliteTemplate.ts`).
 */
export const client = (config: Config, template: PgliteTemplate.Kind = "initdb") =>
  config.url === undefined
    ? Notifications.layerPglite.pipe(
        Layer.provideMerge(
          PgliteClient.layer(config.dataDir === MEMORY ? undefined : pgliteDirectory(config.dataDir), template)
        )
      )
    : PgServerClient.layer({
        url: config.url,
        maxConnections: config.maxConnections ?? 10,
        ...(config.schema === undefined ? {} : { startupOptions: `-c search_path=${config.schema}` })
      })

/** Applies every migration not yet applied; returns what it applied. */
export const migrate = Migrations.run

/**
 * The database ready for the stores: connected, migrated, and described by
 * the `Database` service.
 */
export const layer = (config: Config) =>
  Layer.mergeAll(
    info(config.url === undefined ? "pglite" : "postgres"),
    Layer.effectDiscard(migrate),
    Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, WalFlush.probe))
  ).pipe(Layer.provideMerge(client(config, "migrated")))
