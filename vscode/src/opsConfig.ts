// The ops a gpuemu.toml declares, for the Test Explorer before any run: a reader of the TOML the
// config uses (tables, arrays of tables, inline tables, arrays, strings, numbers, booleans) and the
// naming rules of docs/configuration.md (implementations named OP/IMPL, extends inherits kernels).
import * as path from 'node:path';

export interface ConfigOp {
  name: string; // the result name: "softmax", or "softmax/v1" for one implementation
  spec: string; // the [[ops]] name
  implementation?: string; // set for an op with `implementations`
  dtypes: string[];
  kernelFiles: string[]; // script files of the op (relative to the config's folder), for validate-on-save
  referenceFiles: string[]; // its reference script (relative to the config's folder), for validate-on-save
  line: number; // 0-based line of the op's `name = ...` (or its [[ops]] header)
}

type Value = string | number | boolean | Value[] | Table;
interface Table {
  [key: string]: Value;
}

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  line(): number {
    return this.text.slice(0, this.pos).split('\n').length - 1;
  }

  skip(newlines: boolean): void {
    for (;;) {
      const c = this.text[this.pos];
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) this.pos++;
      else if (c === '#') while (this.pos < this.text.length && this.text[this.pos] !== '\n') this.pos++;
      else return;
    }
  }

  fail(what: string): never {
    throw new Error(`gpuemu.toml:${this.line() + 1}: ${what}`);
  }

  key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skip(false);
      const c = this.text[this.pos];
      if (c === '"' || c === "'") parts.push(this.string());
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(this.text.slice(this.pos));
        if (!m) this.fail('expected a key');
        parts.push(m[0]);
        this.pos += m[0].length;
      }
      this.skip(false);
      if (this.text[this.pos] !== '.') return parts;
      this.pos++;
    }
  }

  string(): string {
    const t = this.text;
    const quote = t[this.pos];
    const triple = t.startsWith(quote.repeat(3), this.pos);
    this.pos += triple ? 3 : 1;
    if (triple && t[this.pos] === '\n') this.pos++;
    let out = '';
    for (;;) {
      if (this.pos >= t.length) this.fail('unterminated string');
      if (triple ? t.startsWith(quote.repeat(3), this.pos) : t[this.pos] === quote) {
        this.pos += triple ? 3 : 1;
        return out;
      }
      const c = t[this.pos++];
      if (c === '\\' && quote === '"') {
        const e = t[this.pos++];
        const simple: Record<string, string> = {
          n: '\n',
          t: '\t',
          r: '\r',
          '"': '"',
          '\\': '\\',
          b: '\b',
          f: '\f',
        };
        if (e in simple) out += simple[e];
        else if (e === 'u' || e === 'U') {
          const n = e === 'u' ? 4 : 8;
          out += String.fromCodePoint(parseInt(t.slice(this.pos, this.pos + n), 16));
          this.pos += n;
        } else if (triple && (e === '\n' || e === ' ' || e === '\r')) {
          while (/\s/.test(t[this.pos] ?? '')) this.pos++;
        } else this.fail(`bad escape \\${e}`);
      } else out += c;
    }
  }

  value(): Value {
    this.skip(false);
    const c = this.text[this.pos];
    if (c === '"' || c === "'") return this.string();
    if (c === '[') {
      this.pos++;
      const items: Value[] = [];
      for (;;) {
        this.skip(true);
        if (this.text[this.pos] === ']') {
          this.pos++;
          return items;
        }
        items.push(this.value());
        this.skip(true);
        if (this.text[this.pos] === ',') this.pos++;
      }
    }
    if (c === '{') {
      this.pos++;
      const table: Table = {};
      for (;;) {
        this.skip(false);
        if (this.text[this.pos] === '}') {
          this.pos++;
          return table;
        }
        const key = this.key();
        if (this.text[this.pos] !== '=') this.fail('expected =');
        this.pos++;
        assign(table, key, this.value());
        this.skip(false);
        if (this.text[this.pos] === ',') this.pos++;
      }
    }
    const m = /^[^\s,\]}#]+/.exec(this.text.slice(this.pos));
    if (!m) this.fail('expected a value');
    this.pos += m[0].length;
    if (m[0] === 'true' || m[0] === 'false') return m[0] === 'true';
    const n = Number(m[0].replace(/_/g, ''));
    return Number.isNaN(n) ? m[0] : n;
  }
}

function assign(table: Table, key: string[], value: Value): void {
  let t = table;
  for (const part of key.slice(0, -1)) {
    if (typeof t[part] !== 'object' || Array.isArray(t[part])) t[part] = {};
    t = t[part] as Table;
  }
  t[key[key.length - 1]] = value;
}

// The document as nested tables; `opLines` holds, per [[ops]] table, the line of its name (or header).
export function parseToml(text: string): { root: Table; opLines: number[] } {
  const r = new Reader(text);
  const root: Table = {};
  const opLines: number[] = [];
  let current = root;
  for (;;) {
    r.skip(true);
    if (r.pos >= text.length) return { root, opLines };
    if (text[r.pos] === '[') {
      const array = text.startsWith('[[', r.pos);
      const header = r.line();
      r.pos += array ? 2 : 1;
      const key = r.key();
      r.pos += array ? 2 : 1;
      let parent = root;
      for (const part of key.slice(0, -1)) {
        let next = parent[part];
        if (Array.isArray(next)) next = next[next.length - 1];
        if (typeof next !== 'object' || next === null) parent[part] = next = {};
        parent = next as Table;
      }
      const last = key[key.length - 1];
      if (array) {
        if (!Array.isArray(parent[last])) parent[last] = [];
        current = {};
        (parent[last] as Value[]).push(current);
        if (key.length === 1 && last === 'ops') opLines.push(header);
      } else {
        if (typeof parent[last] !== 'object' || Array.isArray(parent[last])) parent[last] = {};
        current = parent[last] as Table;
      }
      continue;
    }
    const keyLine = r.line();
    const key = r.key();
    if (text[r.pos] !== '=') r.fail('expected =');
    r.pos++;
    assign(current, key, r.value());
    if (key.length === 1 && key[0] === 'name' && current !== root && opLines.length > 0) {
      const ops = root.ops as Value[] | undefined;
      if (Array.isArray(ops) && ops[ops.length - 1] === current) opLines[opLines.length - 1] = keyLine;
    }
  }
}

const strings = (v: Value | undefined): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;

// package.module:function, as config::is_callable_spelling (src/config/runnable.cpp).
const isCallable = (spec: string) => /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$/.test(spec);

// An implementation's name: the table's `name`, a callable's function name, a script's stem.
function implementation(entry: Value): { name: string; file?: string } | undefined {
  const spec =
    typeof entry === 'string'
      ? entry
      : typeof entry === 'object' && !Array.isArray(entry)
        ? entry.op_script
        : undefined;
  const given =
    typeof entry === 'object' && !Array.isArray(entry) && typeof entry.name === 'string'
      ? entry.name
      : undefined;
  if (typeof spec !== 'string') return undefined;
  if (isCallable(spec)) return { name: given ?? spec.split(':')[1] };
  return { name: given ?? path.basename(spec).replace(/\.[^.]*$/, ''), file: spec };
}

// The ops of a gpuemu.toml text, in file order, implementations expanded to OP/IMPL entries.
export function configOps(text: string): ConfigOp[] {
  const { root, opLines } = parseToml(text);
  const validation = (root.validation ?? {}) as Table;
  const defaultDtypes = strings(validation.dtypes) ?? ['float32'];
  const tables = (Array.isArray(root.ops) ? root.ops : []) as Table[];
  const byName = new Map(tables.map((t) => [String(t.name), t]));
  // `extends`: the chain's first table that names a key decides it; the kernel keys go together.
  const lookup = (
    table: Table,
    pick: (t: Table) => Value | undefined,
    seen = new Set<string>(),
  ): Value | undefined => {
    const own = pick(table);
    if (own !== undefined) return own;
    const parent = typeof table.extends === 'string' ? byName.get(table.extends) : undefined;
    if (!parent || seen.has(table.extends as string)) return undefined;
    seen.add(table.extends as string);
    return lookup(parent, pick, seen);
  };
  const kernelKeys = (t: Table): Table | undefined =>
    t.op_script !== undefined || t.module !== undefined || t.implementations !== undefined ? t : undefined;
  const out: ConfigOp[] = [];
  tables.forEach((table, i) => {
    const spec = String(table.name ?? '');
    if (!spec) return;
    const dtypes = strings(lookup(table, (t) => t.dtypes)) ?? defaultDtypes;
    const kernels = (lookup(table, kernelKeys) ?? {}) as Table;
    const line = opLines[i] ?? 0;
    const reference = lookup(table, (t) => t.reference);
    const referenceFiles = typeof reference === 'string' && !isCallable(reference) ? [reference] : [];
    const impls = Array.isArray(kernels.implementations)
      ? kernels.implementations.map(implementation)
      : undefined;
    if (impls) {
      for (const impl of impls) {
        if (!impl) continue;
        out.push({
          name: `${spec}/${impl.name}`,
          spec,
          implementation: impl.name,
          dtypes,
          line,
          kernelFiles: impl.file ? [impl.file] : [],
          referenceFiles,
        });
      }
      return;
    }
    const script =
      typeof kernels.op_script === 'string' && !isCallable(kernels.op_script) ? [kernels.op_script] : [];
    out.push({ name: spec, spec, dtypes, line, kernelFiles: script, referenceFiles });
  });
  return out;
}
