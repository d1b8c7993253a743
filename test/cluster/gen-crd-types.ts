// Generates src/platform/kubernetes/crd-types.ts from crds/*.yaml, so the CRD schemas are the one
// source of truth for the TypeScript shapes of the sless kinds.
//
//   node --import tsx test/cluster/gen-crd-types.ts          rewrite the file
//   node --import tsx test/cluster/gen-crd-types.ts --check  exit 1 when it is out of date
// (test/cluster/crd-types.test.ts runs the check as part of `npm test`.)
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { readCrdFiles } from './install-crds.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CRD_TYPES_PATH = path.join(root, 'src', 'platform', 'kubernetes', 'crd-types.ts');

/** Names the controller and its tests agree on that no schema carries. */
const METADATA_NAMES = `/** Label on every object a FunctionRepository generates: the repository's name. */
export const LABEL_REPOSITORY = 'sless.kube5s.ru/repository';
/** Annotation whose new value asks for an immediate reconcile (like Flux's reconcile.fluxcd.io/requestedAt). */
export const ANNOTATION_REQUESTED_AT = 'sless.kube5s.ru/requestedAt';`;

/** The OpenAPI v3 subset the CRDs use, as written in the YAML (the client's model renames enum/default). */
interface Schema {
  /** Names the generated type where kind + property name would clash (a nested list of the same name). */
  title?: string;
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  maxLength?: number;
  format?: string;
}

/** The parts of a CRD the generator reads, as plain YAML. */
interface RawCrd {
  kind: string;
  metadata?: { name?: string };
  spec: {
    group: string;
    names: { kind: string; plural: string; singular?: string; shortNames?: string[]; categories?: string[] };
    versions: Array<{ name: string; storage?: boolean; schema?: { openAPIV3Schema?: Schema } }>;
  };
}

async function readRawCrds(): Promise<RawCrd[]> {
  return (await readCrdFiles())
    .flatMap(({ text }) => parseAllDocuments(text).map((d) => d.toJS() as RawCrd))
    .filter((o) => o?.kind === 'CustomResourceDefinition');
}

interface Emitter {
  readonly blocks: string[];
}

export async function generateCrdTypes(): Promise<string> {
  const crds = await readRawCrds();
  const out: Emitter = { blocks: [] };
  const group = crds[0]?.spec.group ?? '';
  const version = storageVersion(crds[0]);
  out.blocks.push(
    `// GENERATED from crds/*.yaml by test/cluster/gen-crd-types.ts; do not edit by hand.\n` +
      `// Regenerate with: node --import tsx test/cluster/gen-crd-types.ts\n` +
      `// Timestamps are RFC 3339 strings, as the API server sends them in JSON.\n\n` +
      `export const GROUP = '${group}';\nexport const VERSION = '${version}';\n` +
      `export const API_VERSION = \`\${GROUP}/\${VERSION}\`;\n\n${METADATA_NAMES}`,
  );
  out.blocks.push(`/** The standard metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** The parts of ObjectMeta the sless kinds use, in their JSON form. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
}`);

  const kinds: string[] = [];
  for (const crd of crds) {
    const { kind, plural, singular, shortNames, categories } = crd.spec.names;
    const v = crd.spec.versions.find((x) => x.storage) ?? crd.spec.versions[0];
    const schema = v?.schema?.openAPIV3Schema;
    const spec = schema?.properties?.spec;
    const status = schema?.properties?.status;
    if (!spec || !status) throw new Error(`CRD ${crd.metadata?.name}: schema needs spec and status`);
    emitObject(out, `${kind}Spec`, spec, kind);
    emitObject(out, `${kind}Status`, status, kind);
    out.blocks.push(
      `${doc(schema?.description)}export interface ${kind}Resource {\n  apiVersion: typeof API_VERSION;\n  kind: '${kind}';\n` +
        `  metadata: ObjectMeta;\n  spec: ${kind}Spec;\n  status?: ${kind}Status;\n}`,
    );
    kinds.push(
      `  ${kind}: {\n    kind: '${kind}',\n    plural: '${plural}',\n    singular: '${singular ?? ''}',\n` +
        `    shortNames: [${(shortNames ?? []).map((s) => `'${s}'`).join(', ')}],\n` +
        `    categories: [${(categories ?? []).map((s) => `'${s}'`).join(', ')}],\n  },`,
    );
  }
  out.blocks.push(
    `/** Kind, plural and names of each sless kind (for CustomObjectsApi calls and kubectl). */\n` +
      `export const KINDS = {\n${kinds.join('\n')}\n} as const;\nexport type SlessKind = keyof typeof KINDS;`,
  );
  return `${out.blocks.join('\n\n')}\n`;
}

function storageVersion(crd: RawCrd | undefined): string {
  return (crd?.spec.versions.find((v) => v.storage) ?? crd?.spec.versions[0])?.name ?? '';
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** Emits `export interface <name>` for an object schema (and named types for what it nests). */
function emitObject(out: Emitter, name: string, schema: Schema, kind: string): void {
  const required = new Set(schema.required ?? []);
  const lines: string[] = [];
  for (const [prop, sub] of Object.entries(schema.properties ?? {})) {
    const type = typeOf(out, sub, kind, prop);
    lines.push(`${doc(describe(sub), '  ')}  ${prop}${required.has(prop) ? '' : '?'}: ${type};`);
  }
  out.blocks.push(`${doc(describe(schema))}export interface ${name} {\n${lines.join('\n')}\n}`);
}

/**
 * Fields a structural schema cannot type because they take two shapes (untyped, with
 * x-kubernetes-preserve-unknown-fields and CEL rules for each shape): their TypeScript type by hand.
 */
const TWO_SHAPED: Readonly<Record<string, string>> = {
  'Function.env': 'Record<string, string> | Array<{ name: string; value?: string }>',
};

function typeOf(out: Emitter, s: Schema, kind: string, prop: string): string {
  if (prop === 'conditions') return 'Condition[]';
  const twoShaped = TWO_SHAPED[`${kind}.${prop}`];
  if (twoShaped && s.type === undefined) return twoShaped;
  if (s.enum) {
    const typeName = s.title ?? `${kind}${pascal(prop)}`;
    const upper = (t: string) => t.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    const constName = s.title ? `${upper(s.title)}_VALUES` : `${upper(kind)}_${upper(prop)}_VALUES`;
    out.blocks.push(
      `export const ${constName} = [${s.enum.map((e) => `'${String(e)}'`).join(', ')}] as const;\n` +
        `export type ${typeName} = (typeof ${constName})[number];`,
    );
    return typeName;
  }
  switch (s.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array': {
      if (!s.items) throw new Error(`${kind}.${prop}: array without items`);
      const items = s.items;
      if (items.type === 'object' && items.properties) {
        const itemName = items.title ?? `${kind}${pascal(prop)}Item`;
        emitObject(out, itemName, items, kind);
        return `${itemName}[]`;
      }
      return `${typeOf(out, items, kind, prop)}[]`;
    }
    case 'object': {
      if (s.properties) {
        const nested = `${kind}${pascal(prop)}`;
        emitObject(out, nested, s, kind);
        return nested;
      }
      const extra = s.additionalProperties;
      if (extra && typeof extra === 'object') return `Record<string, ${typeOf(out, extra, kind, prop)}>`;
      return 'Record<string, unknown>';
    }
    default:
      throw new Error(`${kind}.${prop}: unsupported schema type ${String(s.type)}`);
  }
}

/** The description plus the constraints a reader of the type wants to know. */
function describe(s: Schema): string | undefined {
  const facts: string[] = [];
  if (s.default !== undefined) facts.push(`default ${JSON.stringify(s.default)}`);
  if (s.minimum !== undefined || s.maximum !== undefined) facts.push(`range ${s.minimum ?? '-inf'}..${s.maximum ?? 'inf'}`);
  if (s.pattern) facts.push(`pattern ${s.pattern}`);
  if (s.maxLength !== undefined) facts.push(`max ${s.maxLength} chars`);
  if (s.format) facts.push(`format ${s.format}`);
  const parts = [s.description, facts.length > 0 ? `(${facts.join('; ')})` : undefined].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

function doc(text: string | undefined, indent = ''): string {
  if (!text) return '';
  return `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n`;
}

async function main(): Promise<void> {
  const generated = await generateCrdTypes();
  if (process.argv.includes('--check')) {
    const current = await readFile(CRD_TYPES_PATH, 'utf8').catch(() => '');
    if (current !== generated) {
      console.error(`${CRD_TYPES_PATH} is out of date: run node --import tsx test/cluster/gen-crd-types.ts`);
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(CRD_TYPES_PATH, generated);
  console.log(`wrote ${path.relative(root, CRD_TYPES_PATH)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
