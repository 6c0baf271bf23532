{{/*
The text of NOTES.txt, kept in a named template so tests can render it with `helm template`
(which skips NOTES.txt itself).
*/}}
{{- define "sweep-cluster.notes" -}}
{{- $ns := .Release.Namespace -}}
{{- $head := include "sweep-cluster.headServiceName" . -}}
{{- $dashboard := include "sweep-cluster.componentName" (dict "root" . "component" "dashboard") -}}
{{- $jobs := include "sweep-cluster.componentName" (dict "root" . "component" "head-jobs") -}}
{{- $jobPort := int .Values.ports.dashboard -}}
{{- $dashboardPort := int .Values.dashboard.port -}}
{{- $lbAddress := "{.status.loadBalancer.ingress[0].ip}{.status.loadBalancer.ingress[0].hostname}" -}}
{{- $submitAddress := ternary (printf "http://127.0.0.1:%d" $jobPort) "$RAY_API_SERVER_ADDRESS" (eq .Values.jobApi.serviceType "ClusterIP") -}}
{{- with include "sweep-cluster.securityWarning" . -}}
{{ . }}

{{ end -}}
The sweep cluster {{ include "sweep-cluster.fullname" . }} is starting in namespace {{ $ns }} (mode {{ .Values.mode }}, image {{ include "sweep-cluster.image" . }}).
Results store: {{ include "sweep-cluster.storeUri" . }}{{ if eq .Values.store.type "pvc" }} on the PersistentVolumeClaim {{ include "sweep-cluster.storeClaimName" . }}{{ end }} (SWEEPS_STORE in every pod).

1. Wait until the Ray head is ready:
{{- if eq .Values.mode "kuberay" }}
     kubectl -n {{ $ns }} get raycluster {{ include "sweep-cluster.rayClusterName" . }}
     kubectl -n {{ $ns }} wait pod -l ray.io/cluster={{ include "sweep-cluster.rayClusterName" . }},ray.io/node-type=head --for=condition=Ready --timeout=5m
{{- else }}
     kubectl -n {{ $ns }} rollout status deployment/{{ include "sweep-cluster.componentName" (dict "root" . "component" "head") }} --timeout=5m
{{- end }}

2. Reach the Ray job API (port {{ $jobPort }}):
{{- if eq .Values.jobApi.serviceType "ClusterIP" }}
     kubectl -n {{ $ns }} port-forward svc/{{ $head }} {{ $jobPort }}:{{ $jobPort }}
   (leave it running in its own terminal). The API stays inside the cluster: port-forward is the way in.
{{- else if eq .Values.jobApi.serviceType "NodePort" }}
     export NODE_IP=$(kubectl -n {{ $ns }} get nodes -o jsonpath='{.items[0].status.addresses[0].address}')
     export NODE_PORT=$(kubectl -n {{ $ns }} get svc {{ $jobs }} -o jsonpath='{.spec.ports[0].nodePort}')
     export RAY_API_SERVER_ADDRESS=http://$NODE_IP:$NODE_PORT
{{- else }}
     kubectl -n {{ $ns }} get svc {{ $jobs }} --watch     # until EXTERNAL-IP is set
     export RAY_API_SERVER_ADDRESS=http://$(kubectl -n {{ $ns }} get svc {{ $jobs }} -o jsonpath='{{ $lbAddress }}'):{{ $jobPort }}
{{- end }}
{{- if ne .Values.jobApi.serviceType "ClusterIP" }}

   WARNING: the Ray job API is published outside the cluster (jobApi.serviceType {{ .Values.jobApi.serviceType }}).
{{- if eq .Values.auth.mode "token" }}
   It runs any code it is sent with a valid token: anyone who holds the Ray token and can reach it
   can run programs in this cluster with the pods' permissions and read, change or delete the
   results. Keep the token secret, restrict the sources (jobApi.loadBalancerSourceRanges, a
   firewall) or go back to ClusterIP and kubectl port-forward.
{{- else }}
   It has no authentication (auth.mode disabled) and runs any code it is sent: anyone who can reach
   it can run programs in this cluster with the pods' permissions and read, change or delete the
   results. Turn auth.mode token back on, restrict it (jobApi.loadBalancerSourceRanges, a firewall)
   or go back to ClusterIP and kubectl port-forward.
{{- end }}
{{- end }}

3. Submit a sweep from the repository root (your local `ray` should be version {{ .Values.rayVersion }}, like the image):
{{- if eq .Values.auth.mode "token" }}
     export RAY_AUTH_MODE=token
     export RAY_AUTH_TOKEN=$(kubectl -n {{ $ns }} get secret {{ include "sweep-cluster.authSecretName" . }} -o jsonpath='{.data.{{ .Values.auth.secretKey }}}' | base64 -d)
{{- end }}
     ray job submit --address {{ $submitAddress }} --working-dir . -- python sweeps/exp4c.py
   Results land in {{ include "sweep-cluster.storeUri" . }}; re-submitting skips what is stored.
{{- if .Values.dashboard.enabled }}

4. Browse the results dashboard:
{{- if eq .Values.dashboard.service.type "ClusterIP" }}
     kubectl -n {{ $ns }} port-forward svc/{{ $dashboard }} {{ $dashboardPort }}:{{ $dashboardPort }}
     then browse http://127.0.0.1:{{ $dashboardPort }}/
{{- else if eq .Values.dashboard.service.type "NodePort" }}
     export NODE_IP=$(kubectl -n {{ $ns }} get nodes -o jsonpath='{.items[0].status.addresses[0].address}')
     export NODE_PORT=$(kubectl -n {{ $ns }} get svc {{ $dashboard }} -o jsonpath='{.spec.ports[0].nodePort}')
     echo "http://$NODE_IP:$NODE_PORT/"     # open it in a browser
{{- else }}
     kubectl -n {{ $ns }} get svc {{ $dashboard }} --watch     # until EXTERNAL-IP is set
     echo "http://$(kubectl -n {{ $ns }} get svc {{ $dashboard }} -o jsonpath='{{ $lbAddress }}'):{{ $dashboardPort }}/"
{{- end }}
{{- end }}

Troubleshooting (image not loaded, OOMKilled head, small /dev/shm, version mismatch, dropped
port-forward, working directory too big): docs/guide/kubernetes.md in the repository.
{{- end -}}
