{{/*
Labels of every object: the one the kustomize base sets (app.kubernetes.io/part-of: sless, which
`kubectl delete ... -l app.kubernetes.io/part-of=sless` selects) plus Helm's own.
*/}}
{{- define "sless.labels" -}}
app.kubernetes.io/part-of: sless
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The controller pods' selector; fixed, as the Service, the PodDisruptionBudget and the anti-affinity select it. */}}
{{- define "sless.selector" -}}
app.kubernetes.io/name: sless-controller
{{- end }}

{{/* The controller's ServiceAccount as the API server names it (RBAC subjects, the admission policy). */}}
{{- define "sless.serviceAccountUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:sless-controller
{{- end }}

{{- define "sless.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{- define "sless.secretName" -}}
{{ .Values.secret.existingSecret | default "sless-controller-secrets" }}
{{- end }}
