// schema.mjs - write a TypeScript module that types docs/grafana/mfu-dashboard.json against
// Grafana's own schema (@grafana/schema, pinned in web/package-lock.json), for tsc --noEmit.
//
//   node tests/grafana/schema.mjs DASHBOARD.json OUT.ts
//
// Object literals typed with an interface get TypeScript's excess-property check, so a key the
// schema does not know (a typo, a field of another panel type) is an error, as is a value of
// the wrong type or outside an enum. Loose<T> turns the schema's string enums into the unions
// of their values ("table" for LegendDisplayMode.Table), which is what the JSON holds. The
// keys Grafana's export adds for import (__inputs, __requires) are not part of the dashboard
// model and are left out. Every panel's options and custom field config are also typed with
// its panel type's own schema (timeseries, stat), and so is every custom.* override value.
import { readFileSync, writeFileSync } from 'node:fs';

const [src, out] = process.argv.slice(2);
const dash = JSON.parse(readFileSync(src, 'utf8'));
for (const k of Object.keys(dash)) if (k.startsWith('__')) delete dash[k];

const kinds = {
  timeseries: 'TimeSeries',
  stat: 'Stat',
};
const lines = [
  "import type { Dashboard } from '@grafana/schema';",
  "import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';",
  "import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';",
  'type Loose<T> = T extends string ? `${T}`',
  '  : T extends number | boolean | null | undefined ? T',
  '  : T extends ReadonlyArray<infer U> ? Array<Loose<U>>',
  '  : T extends object ? { [K in keyof T]: Loose<T[K]> }',
  '  : T;',
  `export const dashboard: Loose<Dashboard> = ${JSON.stringify(dash, null, 2)};`,
];
for (const p of dash.panels ?? []) {
  const kind = kinds[p.type];
  if (!kind) {
    console.error(`schema.mjs: panel ${p.id} has type ${p.type}, which this check does not type`);
    process.exit(1);
  }
  lines.push(`export const options_${p.id}: Loose<${kind}.Options> = ${JSON.stringify(p.options ?? {})};`);
  const custom = p.fieldConfig?.defaults?.custom;
  if (custom !== undefined) {
    if (kind !== 'TimeSeries') {
      console.error(`schema.mjs: panel ${p.id} (${p.type}) has custom field config`);
      process.exit(1);
    }
    lines.push(`export const custom_${p.id}: Loose<TimeSeries.FieldConfig> = ${JSON.stringify(custom)};`);
  }
  (p.fieldConfig?.overrides ?? []).forEach((o, i) =>
    o.properties.forEach((prop, j) => {
      if (!prop.id.startsWith('custom.') || !('value' in prop)) return;
      const key = prop.id.slice('custom.'.length);
      lines.push(`export const override_${p.id}_${i}_${j}: Loose<TimeSeries.FieldConfig>[${JSON.stringify(key)}] = ${JSON.stringify(prop.value)};`);
    }));
}
writeFileSync(out, lines.join('\n') + '\n');
