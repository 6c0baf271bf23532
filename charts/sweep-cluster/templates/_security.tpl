{{/*
The chart's security baseline and the checks that hold values to it.

The defaults meet Kubernetes' "restricted" Pod Security Standard and keep the Ray pods reachable
only by the release's own pods. A value that weakens that is a finding; each finding names the one
allowance (security.allowPrivileged, security.allowRoot, security.allowOpenNetwork) that accepts it.
validate.yaml refuses the install on the first finding whose allowance is false, and NOTES.txt lists
every accepted finding, so a weakened release says so every time it is installed or upgraded.
*/}}

{{/* Container types the restricted Pod Security Standard allows in seLinuxOptions.type. */}}
{{- define "sweep-cluster.allowedSeLinuxTypes" -}}
{{- list "container_t" "container_init_t" "container_kvm_t" "container_engine_t" | toJson -}}
{{- end -}}

{{/*
One finding, as a dict. Call with (list $findings allowance field value risk allowed); returns the
list with the finding appended, as JSON (templates can only return text).
*/}}
{{- define "sweep-cluster.securityFinding" -}}
{{- $findings := index . 0 -}}
{{- $finding := dict "allowance" (index . 1) "field" (index . 2) "value" (index . 3) "risk" (index . 4) "allowed" (index . 5) -}}
{{- append $findings $finding | toJson -}}
{{- end -}}

{{/*
Findings of one securityContext value, the pod's or the containers'. Both levels are checked on
their own: every container of the chart gets containerSecurityContext, but an operator (KubeRay)
may add containers that only inherit the pod's settings. Call with (list $findings "podSecurityContext" $context).
*/}}
{{- define "sweep-cluster.securityContextFindings" -}}
{{- $findings := index . 0 -}}
{{- $name := index . 1 -}}
{{- $context := index . 2 | default dict -}}
{{- if and (hasKey $context "runAsUser") (eq (int $context.runAsUser) 0) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowRoot" (printf "%s.runAsUser" $name) "0" "runs the processes as root, so code sent to the Ray job API runs as root" "a non-zero uid such as 1000, the image's user") | fromJsonArray -}}
{{- end -}}
{{- if and (hasKey $context "runAsNonRoot") (not $context.runAsNonRoot) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowRoot" (printf "%s.runAsNonRoot" $name) "false" "lets the processes run as root" "true") | fromJsonArray -}}
{{- end -}}
{{- $seccomp := $context.seccompProfile | default dict -}}
{{- if eq (toString $seccomp.type) "Unconfined" -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" (printf "%s.seccompProfile.type" $name) "\"Unconfined\"" "runs the containers without a seccomp filter on their system calls" "RuntimeDefault or Localhost") | fromJsonArray -}}
{{- end -}}
{{- $appArmor := $context.appArmorProfile | default dict -}}
{{- if eq (toString $appArmor.type) "Unconfined" -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" (printf "%s.appArmorProfile.type" $name) "\"Unconfined\"" "runs the containers without an AppArmor profile" "RuntimeDefault or Localhost (or no appArmorProfile)") | fromJsonArray -}}
{{- end -}}
{{- $seLinux := $context.seLinuxOptions | default dict -}}
{{- range $key := list "user" "role" -}}
{{- if index $seLinux $key -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" (printf "%s.seLinuxOptions.%s" $name $key) (index $seLinux $key | quote) "gives the containers an SELinux identity of their own instead of the runtime's" "unset") | fromJsonArray -}}
{{- end -}}
{{- end -}}
{{- if and $seLinux.type (not (has $seLinux.type (include "sweep-cluster.allowedSeLinuxTypes" . | fromJsonArray))) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" (printf "%s.seLinuxOptions.type" $name) ($seLinux.type | quote) "gives the containers an SELinux type other than the container types" (include "sweep-cluster.allowedSeLinuxTypes" . | fromJsonArray | join ", ")) | fromJsonArray -}}
{{- end -}}
{{- toJson $findings -}}
{{- end -}}

{{/*
Every finding of the values, as a JSON list of dicts (allowance, field, value, risk, allowed).
*/}}
{{- define "sweep-cluster.securityFindings" -}}
{{- $v := .Values -}}
{{- $pod := $v.podSecurityContext | default dict -}}
{{- $container := $v.containerSecurityContext | default dict -}}
{{- $findings := list -}}

{{- /* Root, seccomp, AppArmor and SELinux, at both levels. */ -}}
{{- $findings = include "sweep-cluster.securityContextFindings" (list $findings "podSecurityContext" $pod) | fromJsonArray -}}
{{- $findings = include "sweep-cluster.securityContextFindings" (list $findings "containerSecurityContext" $container) | fromJsonArray -}}
{{- if not (or $pod.runAsNonRoot $container.runAsNonRoot) -}}
{{- if not (or (hasKey $pod "runAsNonRoot") (hasKey $container "runAsNonRoot")) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowRoot" "podSecurityContext.runAsNonRoot" "unset" "lets the processes run as root (neither podSecurityContext nor containerSecurityContext sets runAsNonRoot)" "true") | fromJsonArray -}}
{{- end -}}
{{- end -}}
{{- if not (or ($pod.seccompProfile | default dict).type ($container.seccompProfile | default dict).type) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" "containerSecurityContext.seccompProfile.type" "unset" "leaves the containers to the node's default, often no seccomp filter (neither podSecurityContext nor containerSecurityContext sets seccompProfile)" "RuntimeDefault or Localhost") | fromJsonArray -}}
{{- end -}}

{{- /* What only a container's securityContext can grant. */ -}}
{{- if $container.privileged -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" "containerSecurityContext.privileged" "true" "gives every container all of the node's devices and capabilities: code sent to the Ray job API can take over the node" "false") | fromJsonArray -}}
{{- end -}}
{{- if not (and (hasKey $container "allowPrivilegeEscalation") (not $container.allowPrivilegeEscalation)) -}}
{{- $value := ternary "true" "unset (Kubernetes then allows it)" (hasKey $container "allowPrivilegeEscalation") -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" "containerSecurityContext.allowPrivilegeEscalation" $value "lets processes gain more privileges than their parent, e.g. through setuid programs" "false") | fromJsonArray -}}
{{- end -}}
{{- $capabilities := $container.capabilities | default dict -}}
{{- $added := without ($capabilities.add | default list) "NET_BIND_SERVICE" -}}
{{- if $added -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" "containerSecurityContext.capabilities.add" (toJson $capabilities.add) "gives the containers Linux capabilities beyond the restricted set" "[] or [\"NET_BIND_SERVICE\"]") | fromJsonArray -}}
{{- end -}}
{{- if not (has "ALL" ($capabilities.drop | default list)) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" "containerSecurityContext.capabilities.drop" (toJson ($capabilities.drop | default list)) "keeps the container runtime's default Linux capabilities" "a list that holds \"ALL\"") | fromJsonArray -}}
{{- end -}}
{{- if eq (toString $container.procMount) "Unmasked" -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" "containerSecurityContext.procMount" "\"Unmasked\"" "exposes the /proc paths the runtime masks, some of them the node's" "Default") | fromJsonArray -}}
{{- end -}}

{{- /* The profiles' older form, annotations, which Kubernetes still reads for AppArmor. */ -}}
{{- range $key, $value := $v.podAnnotations -}}
{{- $profileKey := or (hasPrefix "container.apparmor.security.beta.kubernetes.io/" $key) (hasPrefix "seccomp.security.alpha.kubernetes.io/" $key) (hasPrefix "container.seccomp.security.alpha.kubernetes.io/" $key) -}}
{{- if and $profileKey (contains "unconfined" (lower (toString $value))) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowPrivileged" (printf "podAnnotations.%s" $key) ($value | quote) "runs the containers without that AppArmor or seccomp profile" "no profile annotation (set appArmorProfile or seccompProfile in the security contexts)") | fromJsonArray -}}
{{- end -}}
{{- end -}}

{{- /* Who can reach the Ray pods. */ -}}
{{- if and (ne $v.auth.mode "token") (not $v.networkPolicy.enabled) -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowOpenNetwork" "networkPolicy.enabled" "false" (printf "with auth.mode %q lets every pod of the cluster run any code through the Ray job API (port %d) without a token" $v.auth.mode (int $v.ports.dashboard)) "true, or auth.mode token") | fromJsonArray -}}
{{- end -}}
{{- range $index, $peer := $v.networkPolicy.extraIngressFrom -}}
{{- $field := printf "networkPolicy.extraIngressFrom[%d]" $index -}}
{{- with $peer.ipBlock -}}
{{- $cidr := toString .cidr -}}
{{- $ipv6 := contains ":" $cidr -}}
{{- $widest := ternary 7 8 $ipv6 -}}
{{- if lt (int (last (splitList "/" $cidr))) $widest -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowOpenNetwork" (printf "%s.ipBlock.cidr" $field) ($cidr | quote) (printf "admits a range wider than any private network (/%d) to every port of the Ray pods" $widest) (printf "a range of /%d or narrower, such as %s" $widest (ternary "fd00::/8" "10.0.0.0/8" $ipv6))) | fromJsonArray -}}
{{- end -}}
{{- end -}}
{{- /* An empty selector (no matchLabels, no matchExpressions) selects everything; an absent
podSelector beside a namespaceSelector means every pod of the namespaces it selects. */ -}}
{{- $namespaces := $peer.namespaceSelector | default dict -}}
{{- $pods := $peer.podSelector | default dict -}}
{{- $allPods := not (or $pods.matchLabels $pods.matchExpressions) -}}
{{- $everyNamespace := and (hasKey $peer "namespaceSelector") (not (or $namespaces.matchLabels $namespaces.matchExpressions)) $allPods -}}
{{- $everyPod := and (not (hasKey $peer "namespaceSelector")) (hasKey $peer "podSelector") $allPods -}}
{{- if or $everyNamespace $everyPod -}}
{{- $findings = include "sweep-cluster.securityFinding" (list $findings "allowOpenNetwork" $field (toJson $peer) (printf "admits every pod of %s to every port of the Ray pods" (ternary "every namespace" "the release's namespace" $everyNamespace)) "selectors with matchLabels or matchExpressions") | fromJsonArray -}}
{{- end -}}
{{- end -}}
{{- toJson $findings -}}
{{- end -}}

{{/* The security.* allowances that are true, as a JSON list of their names. */}}
{{- define "sweep-cluster.securityAllowances" -}}
{{- $allowed := list -}}
{{- $security := .Values.security | default dict -}}
{{- range $name := list "allowPrivileged" "allowRoot" "allowOpenNetwork" -}}
{{- if index $security $name -}}
{{- $allowed = append $allowed $name -}}
{{- end -}}
{{- end -}}
{{- toJson $allowed -}}
{{- end -}}

{{/* Fails the render on the first finding whose allowance is false, in one line. */}}
{{- define "sweep-cluster.validateSecurity" -}}
{{- $allowed := include "sweep-cluster.securityAllowances" . | fromJsonArray -}}
{{- range include "sweep-cluster.securityFindings" . | fromJsonArray -}}
{{- if not (has .allowance $allowed) -}}
{{- fail (printf "%s: %s %s. Allowed: %s, or set security.%s=true to accept the risk." .field .value .risk .allowed .allowance) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Where each environment variable the chart sets on the Ray containers comes from, for the message
that refuses the same name in head.extraEnv or worker.extraEnv. Call with the variable's name.
*/}}
{{- define "sweep-cluster.chartEnvSource" -}}
{{- $sources := dict
    "SWEEPS_STORE" "store.type and its store.pvc.mountPath or store.objectStore.uri"
    "AWS_ENDPOINT_URL" "store.objectStore.endpointUrl"
    "AWS_REGION" "store.objectStore.region"
    "RAY_AUTH_MODE" "auth.mode"
    "RAY_AUTH_TOKEN" "auth.mode, auth.existingSecret and auth.secretKey"
    "RAY_USAGE_STATS_ENABLED" "rayUsageStats" -}}
{{- if hasKey $sources . -}}
{{- get $sources . -}}
{{- else if hasPrefix "RAY_AUTH_" . -}}
auth.mode
{{- else -}}
the chart's own settings
{{- end -}}
{{- end -}}

{{/*
Refuses, always, an extraEnv entry that repeats a variable the chart sets or one set earlier in
the same list. Kubernetes keeps the last of two entries with one name, so a repeat would silently
replace the chart's value: RAY_AUTH_MODE=disabled after the chart's token would turn authentication
off. Every RAY_AUTH_* name is the chart's: Ray's authentication follows auth.* only. (envFrom, where
store.objectStore.credentialsSecret goes, cannot override env: env wins.)
*/}}
{{- define "sweep-cluster.validateExtraEnv" -}}
{{- $chartNames := list -}}
{{- range include "sweep-cluster.rayEnv" . | fromYamlArray -}}
{{- $chartNames = append $chartNames .name -}}
{{- end -}}
{{- range $component := list "head" "worker" -}}
{{- $seen := dict -}}
{{- range $index, $item := (index $.Values $component).extraEnv -}}
{{- $field := printf "%s.extraEnv[%d].name" $component $index -}}
{{- if or (has $item.name $chartNames) (hasPrefix "RAY_AUTH_" $item.name) -}}
{{- $source := include "sweep-cluster.chartEnvSource" $item.name -}}
{{- fail (printf "%s: %q is set by the chart itself (from %s); a second entry would replace the chart's value in the %s container, since Kubernetes keeps the last. Allowed: any name the chart does not set (%s, RAY_AUTH_*); change %s instead." $field $item.name $source $component (join ", " $chartNames) $source) -}}
{{- end -}}
{{- if hasKey $seen $item.name -}}
{{- fail (printf "%s: %q is already set by %s.extraEnv[%d]; Kubernetes would keep only the last. Allowed: each name once." $field $item.name $component (index $seen $item.name)) -}}
{{- end -}}
{{- $_ := set $seen $item.name $index -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The warning NOTES.txt opens with when an allowance is true: every weakening it accepts, and any
allowance that accepts nothing. Empty when no allowance is true.
*/}}
{{- define "sweep-cluster.securityWarning" -}}
{{- $allowed := include "sweep-cluster.securityAllowances" . | fromJsonArray -}}
{{- if $allowed -}}
{{- $findings := include "sweep-cluster.securityFindings" . | fromJsonArray -}}
{{- $used := list -}}
{{- range $findings -}}
{{- $used = append $used .allowance -}}
{{- end -}}
##############################################################################################
WARNING: this release runs with the chart's security checks relaxed by
{{- range $index, $name := $allowed }}{{ if $index }},{{ end }} security.{{ $name }}=true{{ end }}.
{{- range $findings }}
  - {{ .field }}: {{ .value }} {{ .risk }} (accepted by security.{{ .allowance }}).
{{- end }}
{{- range $name := $allowed }}
{{- if not (has $name $used) }}
  - security.{{ $name }}=true accepts nothing these values do; set it back to false.
{{- end }}
{{- end }}
Undo each one, or keep this cluster away from code and people you do not trust.
##############################################################################################
{{- end -}}
{{- end -}}
