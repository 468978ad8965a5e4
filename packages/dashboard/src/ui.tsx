import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"
import { ApiError } from "./api.ts"

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: ApiError | undefined
  readonly loading: boolean
  readonly reload: () => void
}

export const asApiError = (error: unknown) => (error instanceof ApiError ? error : new ApiError(String(error)))

/** Loads on mount and whenever `deps` change; the last answer wins. */
export const useLoad = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> => {
  const [state, setState] = useState<{ data?: A; error?: ApiError; loading: boolean }>({ loading: true })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let live = true
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error: asApiError(error), loading: false })
    )
    return () => {
      live = false
    }
  }, [...deps, round])
  return { data: state.data, error: state.error, loading: state.loading, reload: () => setRound((n) => n + 1) }
}

/** A button's action: busy while it runs, its refusal kept to show beside it. */
export const useAction = <Args extends ReadonlyArray<unknown>>(run: (...args: Args) => Promise<void>) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const act = useCallback(
    async (...args: Args) => {
      setBusy(true)
      setError(undefined)
      try {
        await run(...args)
      } catch (failure) {
        setError(asApiError(failure))
      } finally {
        setBusy(false)
      }
    },
    [run]
  )
  return { act, busy, error }
}

export const Loading = (props: { what: string }) => (
  <p class="muted" role="status">
    Loading {props.what}…
  </p>
)

export const ErrorText = (props: { error: ApiError | undefined }) =>
  props.error === undefined ? null : (
    <p class="error" role="alert">
      {props.error.message}
    </p>
  )

export const Empty = (props: { children: ComponentChildren }) => <p class="empty">{props.children}</p>

/** A labelled input; its hint sits outside the label so the input's name is the label alone. */
export const Field = (props: { label: string; hint?: string; children: ComponentChildren }) => (
  <div class="field">
    {/* biome-ignore lint/a11y/noLabelWithoutControl: the control is the child it wraps */}
    <label>
      <span>{props.label}</span>
      {props.children}
    </label>
    {props.hint === undefined ? null : <small class="muted">{props.hint}</small>}
  </div>
)

export const Submit = (props: { busy: boolean; children: ComponentChildren }) => (
  <button type="submit" disabled={props.busy}>
    {props.busy ? "Working…" : props.children}
  </button>
)

export const Form = (props: { label: string; onSubmit: () => void; children: ComponentChildren; class?: string }) => (
  <form
    class={props.class ?? "form"}
    aria-label={props.label}
    onSubmit={(event) => {
      event.preventDefault()
      props.onSubmit()
    }}
  >
    {props.children}
  </form>
)

export interface Meta {
  readonly limit: number
  /** Null for a page asked by cursor (the leads list); the dashboard pages by offset. */
  readonly offset: number | null
  /** Null for a searched or filtered leads list, which is not counted. */
  readonly total: number | null
  readonly has_more: boolean
  readonly next_offset: number | null
}

/** "21–40 of 120" with Previous and Next: every list of the API pages the same way. */
export const Pager = (props: { meta: Meta; onOffset: (offset: number) => void; noun: string }) => {
  const { meta } = props
  const offset = meta.offset ?? 0
  const first = meta.total === 0 ? 0 : offset + 1
  const last = meta.total === null ? offset + meta.limit : Math.min(offset + meta.limit, meta.total)
  return (
    <nav class="pager" aria-label={`Pages of ${props.noun}`}>
      <span role="status">
        {first}–{last}
        {meta.total === null ? "" : ` of ${meta.total}`} {props.noun}
      </span>
      <button type="button" disabled={offset === 0} onClick={() => props.onOffset(Math.max(0, offset - meta.limit))}>
        Previous
      </button>
      <button
        type="button"
        disabled={!meta.has_more}
        onClick={() => meta.next_offset !== null && props.onOffset(meta.next_offset)}
      >
        Next
      </button>
    </nav>
  )
}

export interface Column<Row> {
  readonly label: string
  readonly cell: (row: Row) => ComponentChildren
}

// biome-ignore-start lint/a11y/noRedundantRoles: a table restyled as cards (display: block) loses its implicit roles in Chromium
/**
 * A table; on a narrow screen each row becomes a card of "label: value" lines (style.css).
 * The explicit roles keep it a table for assistive technology when CSS changes its display.
 */
export const Table = <Row,>(props: {
  caption: string
  columns: ReadonlyArray<Column<Row>>
  rows: ReadonlyArray<Row>
  rowKey: (row: Row) => string
}) => (
  <div class="table-wrap">
    <table role="table">
      <caption class="visually-hidden">{props.caption}</caption>
      <thead role="rowgroup">
        <tr role="row">
          {props.columns.map((column) => (
            <th scope="col" role="columnheader" key={column.label}>
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody role="rowgroup">
        {props.rows.map((row) => (
          <tr role="row" key={props.rowKey(row)}>
            {props.columns.map((column) => (
              <td role="cell" key={column.label} data-label={column.label}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)
// biome-ignore-end lint/a11y/noRedundantRoles: the table above

/** A paged list as every page shows one: loading, the API's error, an empty state, or the table and its pager. */
export const Listing = <Data extends { readonly meta: Meta }, Row>(props: {
  loaded: Loaded<Data>
  rows: (data: Data) => ReadonlyArray<Row>
  caption: string
  /** Plural, for "1–50 of 120 leads" and "Loading leads…". */
  noun: string
  empty: ComponentChildren
  columns: ReadonlyArray<Column<Row>>
  rowKey: (row: Row) => string
  onOffset: (offset: number) => void
}) => {
  const { loaded } = props
  if (loaded.loading && loaded.data === undefined) return <Loading what={props.noun} />
  if (loaded.data === undefined) return <ErrorText error={loaded.error} />
  const rows = props.rows(loaded.data)
  return (
    <>
      <ErrorText error={loaded.error} />
      {rows.length === 0 ? (
        <Empty>{props.empty}</Empty>
      ) : (
        <>
          <Table caption={props.caption} columns={props.columns} rows={rows} rowKey={props.rowKey} />
          <Pager meta={loaded.data.meta} onOffset={props.onOffset} noun={props.noun} />
        </>
      )}
    </>
  )
}

export const Page = (props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) => {
  useEffect(() => {
    document.title = `${props.title} · Leadline`
  }, [props.title])
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions}
      </header>
      {props.children}
    </section>
  )
}

/** A secret shown once, with the warning that it will not be shown again. */
export const ShownOnce = (props: { label: string; value: string; onDone: () => void }) => (
  <section class="shown-once" aria-label={props.label}>
    <p>
      <strong>{props.label}</strong>: copy it now, it is not shown again.
    </p>
    <code class="secret">{props.value}</code>
    <button type="button" onClick={props.onDone}>
      Done
    </button>
  </section>
)

export const when = (iso: string | null | undefined) =>
  iso === null || iso === undefined
    ? "—"
    : new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })

/** Minor units to a display amount, with the currency's digits (ISO 4217 exponent from Intl). */
export const money = (minor: number, currency: string) => {
  const format = new Intl.NumberFormat(undefined, { style: "currency", currency })
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2
  return format.format(minor / 10 ** digits)
}
