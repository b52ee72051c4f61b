// Validates every Kubernetes object in the given YAML files (multi-document; e.g. the output of
// `kubectl kustomize`) against the API schemas, with kubernetes-models' validate(): core and
// built-in groups, the Prometheus Operator's CRDs and KEDA's. Exits 1 naming every invalid
// object (or any object of a kind it has no schema for, so nothing goes unchecked).
//   node validate_objects.mjs FILE...
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const crdPackages = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
  "keda.sh": "@kubernetes-models/keda",
};

async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const pkg = crdPackages[group] ?? "kubernetes-models";
  const path = group ? `${pkg}/${group}/${version}/${kind}` : `${pkg}/${version}/${kind}`;
  const module = await import(path);
  return module[kind];
}

let failures = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length) {
      console.error(`${file}: YAML error: ${doc.errors[0].message}`);
      failures++;
      continue;
    }
    const object = doc.toJS();
    if (!object) continue;
    const name = `${file}: ${object.kind}/${object.metadata?.name}`;
    let Model;
    try {
      Model = await modelFor(object.apiVersion, object.kind);
    } catch (e) {
      console.error(`${name}: no schema for ${object.apiVersion} ${object.kind}`);
      failures++;
      continue;
    }
    try {
      new Model(object).validate();
      checked++;
    } catch (e) {
      console.error(`${name}: invalid: ${e.message}`);
      failures++;
    }
  }
}
console.log(`${checked} objects valid, ${failures} problems`);
process.exit(failures === 0 && checked > 0 ? 0 : 1);
