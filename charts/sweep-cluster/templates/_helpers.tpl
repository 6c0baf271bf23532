{{/*
Shared pieces of the sweep-cluster templates: names, labels, the image, the results store wiring,
resources, probes and the checks that values.schema.json cannot express.
*/}}

{{/* The app.kubernetes.io/name label: the chart name unless overridden. */}}
{{- define "sweep-cluster.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Prefix of every object name: fullnameOverride, else the release name. The release name alone
(not "<release>-<chart>") keeps the names the quickstart uses: svc/sweeps-head, svc/sweeps-dashboard.
*/}}
{{- define "sweep-cluster.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The name of one component's objects, "<fullname>-<component>", at most 63 characters (the DNS
label limit of Service names). The prefix is cut, never the suffix, so components stay distinct.
Call with (dict "root" $ "component" "head").
*/}}
{{- define "sweep-cluster.componentName" -}}
{{- $suffix := printf "-%s" .component -}}
{{- $prefix := include "sweep-cluster.fullname" .root | trunc (int (sub 63 (len $suffix))) | trimSuffix "-" -}}
{{- printf "%s%s" $prefix $suffix -}}
{{- end -}}

{{/*
Name of the RayCluster (mode kuberay). KubeRay derives longer names from it, among them the head
Service <name>-head-svc, which must stay a DNS label, so it is kept to 40 characters.
*/}}
{{- define "sweep-cluster.rayClusterName" -}}
{{- include "sweep-cluster.fullname" . | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of the Service in front of the Ray head, in either mode. */}}
{{- define "sweep-cluster.headServiceName" -}}
{{- if eq .Values.mode "kuberay" -}}
{{- printf "%s-head-svc" (include "sweep-cluster.rayClusterName" .) -}}
{{- else -}}
{{- include "sweep-cluster.componentName" (dict "root" . "component" "head") -}}
{{- end -}}
{{- end -}}

{{/* The helm.sh/chart label value. */}}
{{- define "sweep-cluster.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Selector labels: the stable subset that Deployments and Services match on. They never include
the chart or app version, because a Deployment's selector cannot change after creation.
Call with (dict "root" $ "component" "head").
*/}}
{{- define "sweep-cluster.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sweep-cluster.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of one component's objects. Call with (dict "root" $ "component" "head"). */}}
{{- define "sweep-cluster.labels" -}}
helm.sh/chart: {{ include "sweep-cluster.chart" .root }}
{{ include "sweep-cluster.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: sweep-cluster
{{- end -}}

{{/* The image reference; the tag defaults to the chart's appVersion. */}}
{{- define "sweep-cluster.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
A memory quantity ("512Mi" or "2Gi", as the schema allows) in mebibytes, as a decimal string.
*/}}
{{- define "sweep-cluster.mebibytes" -}}
{{- if hasSuffix "Gi" . -}}
{{- mul (trimSuffix "Gi" . | atoi) 1024 -}}
{{- else -}}
{{- trimSuffix "Mi" . | atoi -}}
{{- end -}}
{{- end -}}

{{/* A memory quantity in bytes, the unit of ray start --object-store-memory. */}}
{{- define "sweep-cluster.bytes" -}}
{{- mul (include "sweep-cluster.mebibytes" . | atoi) 1048576 -}}
{{- end -}}

{{/*
Size of the memory-backed /dev/shm volume for an object store: the object store plus 10 %. Ray puts
the object store in /dev/shm only when /dev/shm has at least that much free, and Python's
multiprocessing shares the same filesystem.
*/}}
{{- define "sweep-cluster.shmSizeLimit" -}}
{{- $mebibytes := include "sweep-cluster.mebibytes" . | atoi -}}
{{- printf "%dMi" (div (add (mul $mebibytes 11) 9) 10) -}}
{{- end -}}

{{/*
Equal requests and limits, so each pod gets the Guaranteed QoS class, unless a component's values
set cpuRequest lower (worker.cpuRequest). Call with a component's values (cpu, memory, cpuRequest).
*/}}
{{- define "sweep-cluster.resources" -}}
requests:
  cpu: {{ default .cpu .cpuRequest | quote }}
  memory: {{ .memory | quote }}
limits:
  cpu: {{ .cpu | quote }}
  memory: {{ .memory | quote }}
{{- end -}}

{{/* Where the results store is, as seen from inside a container: the SWEEPS_STORE value. */}}
{{- define "sweep-cluster.storeUri" -}}
{{- if eq .Values.store.type "pvc" -}}
{{- .Values.store.pvc.mountPath -}}
{{- else -}}
{{- .Values.store.objectStore.uri -}}
{{- end -}}
{{- end -}}

{{/* Name of the results PersistentVolumeClaim (store.type pvc). */}}
{{- define "sweep-cluster.storeClaimName" -}}
{{- if .Values.store.pvc.existingClaim -}}
{{- .Values.store.pvc.existingClaim -}}
{{- else -}}
{{- include "sweep-cluster.componentName" (dict "root" . "component" "results") -}}
{{- end -}}
{{- end -}}

{{/* Environment of every container that reads or writes the results store. */}}
{{- define "sweep-cluster.storeEnv" -}}
- name: SWEEPS_STORE
  value: {{ include "sweep-cluster.storeUri" . | quote }}
{{- if eq .Values.store.type "objectStore" }}
{{- with .Values.store.objectStore.endpointUrl }}
- name: AWS_ENDPOINT_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.store.objectStore.region }}
- name: AWS_REGION
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* envFrom of every container that reads or writes the results store (credentials, if any). */}}
{{- define "sweep-cluster.storeEnvFrom" -}}
{{- if and (eq .Values.store.type "objectStore") .Values.store.objectStore.credentialsSecret -}}
envFrom:
  - secretRef:
      name: {{ .Values.store.objectStore.credentialsSecret }}
{{- end -}}
{{- end -}}

{{/* Name of the Secret that holds the Ray token (auth.mode token). */}}
{{- define "sweep-cluster.authSecretName" -}}
{{- default (include "sweep-cluster.componentName" (dict "root" . "component" "ray-token")) .Values.auth.existingSecret -}}
{{- end -}}

{{/*
Environment shared by the Ray containers (head and workers). RAY_AUTH_MODE is always stated, not
left to Ray: since Ray 2.5x a node whose mode is unset turns token authentication on if it finds a
token file, and nodes that disagree cannot join each other. In token mode every node gets the same
token from one Secret.
*/}}
{{- define "sweep-cluster.rayEnv" -}}
{{- include "sweep-cluster.storeEnv" . }}
- name: RAY_AUTH_MODE
  value: {{ .Values.auth.mode | quote }}
{{- if eq .Values.auth.mode "token" }}
- name: RAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "sweep-cluster.authSecretName" . }}
      key: {{ .Values.auth.secretKey }}
{{- end }}
- name: RAY_USAGE_STATS_ENABLED
  value: {{ ternary "1" "0" .Values.rayUsageStats | quote }}
{{- end -}}

{{/* The results volume mount, if the store is a volume. */}}
{{- define "sweep-cluster.storeVolumeMount" -}}
{{- if eq .Values.store.type "pvc" -}}
- name: results
  mountPath: {{ .Values.store.pvc.mountPath }}
{{- end -}}
{{- end -}}

{{/* The results volume, if the store is a volume. */}}
{{- define "sweep-cluster.storeVolume" -}}
{{- if eq .Values.store.type "pvc" -}}
- name: results
  persistentVolumeClaim:
    claimName: {{ include "sweep-cluster.storeClaimName" . }}
{{- end -}}
{{- end -}}

{{/*
Volumes of a Ray pod: /dev/shm for the object store (memory-backed, so it counts against the
container's memory limit) and /tmp/ray for Ray's logs, sockets and job working directories.
Call with (dict "root" $ "objectStoreMemory" "512Mi").
*/}}
{{- define "sweep-cluster.rayVolumes" -}}
- name: shm
  emptyDir:
    medium: Memory
    sizeLimit: {{ include "sweep-cluster.shmSizeLimit" .objectStoreMemory }}
- name: ray-tmp
  emptyDir: {}
{{- with include "sweep-cluster.storeVolume" .root }}
{{ . }}
{{- end }}
{{- end -}}

{{/* Mounts of a Ray container, matching sweep-cluster.rayVolumes. */}}
{{- define "sweep-cluster.rayVolumeMounts" -}}
- name: shm
  mountPath: /dev/shm
- name: ray-tmp
  mountPath: /tmp/ray
{{- with include "sweep-cluster.storeVolumeMount" . }}
{{ . }}
{{- end }}
{{- end -}}

{{/*
The health check of a Ray node, as an exec probe command: the node's dashboard agent reports on
its raylet; on the head, the dashboard (which serves the job API) also reports on the control store.
wget exits non-zero on any HTTP error. Call with (dict "root" $ "head" true).
*/}}
{{- define "sweep-cluster.rayHealthCommand" -}}
{{- $ports := .root.Values.ports -}}
{{- $check := printf "wget -q -T 2 -O /dev/null http://127.0.0.1:%d/api/local_raylet_healthz" (int $ports.dashboardAgent) -}}
{{- if .head -}}
{{- $check = printf "%s && wget -q -T 2 -O /dev/null http://127.0.0.1:%d/api/gcs_healthz" $check (int $ports.dashboard) -}}
{{- end -}}
- sh
- -c
- {{ $check | quote }}
{{- end -}}

{{/* Readiness and liveness probes of a Ray container. Call with (dict "root" $ "head" true). */}}
{{- define "sweep-cluster.rayProbes" -}}
{{- $probes := .root.Values.probes -}}
readinessProbe:
  exec:
    command:
      {{- include "sweep-cluster.rayHealthCommand" . | nindent 6 }}
  initialDelaySeconds: {{ $probes.readiness.initialDelaySeconds }}
  periodSeconds: {{ $probes.readiness.periodSeconds }}
  timeoutSeconds: {{ $probes.readiness.timeoutSeconds }}
  failureThreshold: {{ $probes.readiness.failureThreshold }}
livenessProbe:
  exec:
    command:
      {{- include "sweep-cluster.rayHealthCommand" . | nindent 6 }}
  initialDelaySeconds: {{ $probes.liveness.initialDelaySeconds }}
  periodSeconds: {{ $probes.liveness.periodSeconds }}
  timeoutSeconds: {{ $probes.liveness.timeoutSeconds }}
  failureThreshold: {{ $probes.liveness.failureThreshold }}
{{- end -}}

{{/*
Pod-level settings shared by every pod: service account, pull secrets, security context. Service
links are off: Kubernetes would otherwise add <SERVICE>_PORT variables for every Service in the
namespace, and a release named "ray" would give the head RAY_HEAD_* variables in Ray's own
RAY_ configuration namespace.
*/}}
{{- define "sweep-cluster.podCommon" -}}
enableServiceLinks: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* Scheduling constraints of one component. Call with the component's values (.Values.head ...). */}}
{{- define "sweep-cluster.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
Checks across values that values.schema.json cannot express. Each failure names the value, what
it was and what is allowed.
*/}}
{{- define "sweep-cluster.validate" -}}
{{- $v := .Values -}}
{{- if and (ne $v.jobApi.serviceType "ClusterIP") (not $v.jobApi.exposeOutsideCluster) -}}
{{- fail (printf "jobApi.serviceType: %q would publish the Ray job API (port %d) outside the cluster, and that API runs any code it is sent. Allowed: ClusterIP (reach it with kubectl port-forward), or set jobApi.exposeOutsideCluster=true to confirm the exposure." $v.jobApi.serviceType (int $v.ports.dashboard)) -}}
{{- end -}}
{{- if and (ne $v.jobApi.serviceType "ClusterIP") (ne $v.auth.mode "token") (not $v.jobApi.allowUnauthenticatedExposure) -}}
{{- fail (printf "auth.mode: %q with jobApi.serviceType %q would publish the Ray job API (port %d) without authentication: anyone who reaches it runs any code in the cluster. Allowed: auth.mode token, jobApi.serviceType ClusterIP, or set jobApi.allowUnauthenticatedExposure=true to confirm." $v.auth.mode $v.jobApi.serviceType (int $v.ports.dashboard)) -}}
{{- end -}}
{{- range $component := list "head" "worker" -}}
{{- $values := index $v $component -}}
{{- $memoryMi := include "sweep-cluster.mebibytes" $values.memory | atoi -}}
{{- $objectStoreMi := include "sweep-cluster.mebibytes" $values.objectStoreMemory | atoi -}}
{{- if gt (mul $objectStoreMi 2) $memoryMi -}}
{{- fail (printf "%s.objectStoreMemory: %s is more than half of %s.memory (%s); /dev/shm holds the object store inside the container's memory limit. Allowed: at most %dMi, or raise %s.memory." $component $values.objectStoreMemory $component $values.memory (div $memoryMi 2) $component) -}}
{{- end -}}
{{- end -}}
{{- if eq $v.mode "kuberay" -}}
{{- $w := $v.worker -}}
{{- if or (lt (int $w.replicas) (int $w.minReplicas)) (gt (int $w.replicas) (int $w.maxReplicas)) -}}
{{- fail (printf "worker.replicas: %d is outside the autoscaling bounds. Allowed: worker.minReplicas (%d) <= worker.replicas <= worker.maxReplicas (%d)." (int $w.replicas) (int $w.minReplicas) (int $w.maxReplicas)) -}}
{{- end -}}
{{- end -}}
{{- if and (eq $v.store.type "objectStore") (not $v.store.objectStore.uri) -}}
{{- fail "store.objectStore.uri: \"\" is empty. Allowed: a pyarrow filesystem URI such as s3://bucket/prefix when store.type is objectStore (or store.type pvc)." -}}
{{- end -}}
{{- include "sweep-cluster.validateExtraEnv" . -}}
{{- include "sweep-cluster.validateSecurity" . -}}
{{- end -}}
