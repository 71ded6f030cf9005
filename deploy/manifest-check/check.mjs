// Checks a Kubernetes manifest (deploy/k8s.yaml) with no cluster at hand: each document against
// the Kubernetes API's schema for its kind (kubernetes-models: types, enums, required fields),
// then the fields this project relies on, which a schema cannot know and a misspelt field name
// would silently drop (Kubernetes' schemas accept unknown fields):
//   - the image has a version tag (":latest" is pulled Always, which fails on kind/minikube);
//   - a read-only root filesystem has a writable /tmp (multipart uploads spool there), an
//     emptyDir with a size limit;
//   - the container listens on all interfaces on its declared port; probes /healthz and
//     /readyz on that port; the Service targets it;
//   - a preStop pause, and a grace period longer than it plus --drain-delay plus Swoop's 30 s
//     shutdown timeout.
// Prints "<file> against the Kubernetes schemas and Swoop's needs: Passed: 1" (or Failed: 1 and
// each problem). Usage: npm ci && node check.mjs ../k8s.yaml
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";

const file = process.argv[2];
const models = { "apps/v1 Deployment": Deployment, "v1 Service": Service };
const problems = [];
const docs = parseAllDocuments(readFileSync(file, "utf8")).map((d) => {
  if (d.errors.length) problems.push(`YAML: ${d.errors.map((e) => e.message).join("; ")}`);
  return d.toJS();
});

for (const doc of docs) {
  const key = `${doc.apiVersion} ${doc.kind}`;
  const Model = models[key];
  if (!Model) {
    problems.push(`${key}: no schema here for this kind (add it to check.mjs)`);
    continue;
  }
  try {
    new Model(doc).validate();
  } catch (e) {
    problems.push(`${key} ${doc.metadata?.name}: ${e.message}`);
  }
}

const need = (cond, text) => {
  if (!cond) problems.push(text);
};

const deployments = docs.filter((d) => d.kind === "Deployment");
need(deployments.length === 1, "one Deployment expected");
const pod = deployments[0]?.spec?.template?.spec ?? {};
const container = pod.containers?.[0] ?? {};
const args = container.args ?? [];
const arg = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

// The image: a tag, not latest, and a pull policy that uses an image the node already has.
const tag = /:([^/:@]+)$/.exec(container.image ?? "")?.[1];
need(tag && tag !== "latest", `image ${container.image}: give a version tag (":latest" is pulled Always)`);
need(["IfNotPresent", "Never"].includes(container.imagePullPolicy), "imagePullPolicy: IfNotPresent (or Never) for an image loaded into the cluster");

// A read-only root filesystem needs a writable /tmp.
if (container.securityContext?.readOnlyRootFilesystem === true) {
  const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === "/tmp");
  const volume = mount && (pod.volumes ?? []).find((v) => v.name === mount.name);
  need(mount, "readOnlyRootFilesystem without a volume at /tmp: uploads over 64 KiB are spooled there");
  need(!mount || (volume?.emptyDir && volume.emptyDir.sizeLimit), "the /tmp volume: an emptyDir with a sizeLimit");
} else {
  problems.push("securityContext.readOnlyRootFilesystem: true expected (with /tmp as a volume)");
}

// Listening: all interfaces, on the declared port; probes and the Service on it.
const port = (container.ports ?? [])[0];
need(arg("--host") === "0.0.0.0", "args: --host 0.0.0.0 (reachable from outside the pod)");
need(port && String(port.containerPort) === arg("--port"), "args: --port the containerPort");
const probes = { readinessProbe: "/readyz", livenessProbe: "/healthz", startupProbe: "/healthz" };
for (const [probe, path] of Object.entries(probes)) {
  const get = container[probe]?.httpGet;
  need(get?.path === path && (get.port === port?.name || get.port === port?.containerPort), `${probe}: GET ${path} on the container's port`);
}
for (const service of docs.filter((d) => d.kind === "Service")) {
  for (const p of service.spec?.ports ?? []) {
    need(p.targetPort === port?.name || p.targetPort === port?.containerPort, `Service ${service.metadata?.name}: targetPort ${p.targetPort} is not the container's port`);
  }
}

// Shutdown: preStop pause, then Swoop's drain delay and shutdown timeout, within the grace period.
const preStop = container.lifecycle?.preStop;
const pause = preStop?.sleep?.seconds ?? (preStop?.exec?.command?.[0] === "sleep" ? Number(preStop.exec.command[1]) : undefined);
need(pause > 0, "lifecycle.preStop: a sleep (1.30+) or exec [sleep, N]");
const drain = Number(arg("--drain-delay") ?? 0);
const grace = pod.terminationGracePeriodSeconds ?? 30;
need(grace > (pause ?? 0) + drain + 30, `terminationGracePeriodSeconds ${grace}: more than preStop ${pause} + drain ${drain} + 30 s needed`);

const name = `${file} against the Kubernetes schemas and Swoop's needs`;
if (problems.length) {
  for (const p of problems) console.log(`  ${p}`);
  console.log(`${name}: Failed: 1`);
  process.exit(1);
}
console.log(`${name}: Passed: 1`);
