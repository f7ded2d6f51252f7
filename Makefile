# TBMQ: MQTT broker routed through Kafka, Redis-backed sessions, Kubernetes operator.
# Set-up on a fresh machine is two commands: `make run` and `make test` (see README.md).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
ENV := source scripts/env.sh &&
MVN := ./mvnw -B --no-transfer-progress
NODES ?= 1
FUZZ_SECONDS ?= 300
# The short fuzzing pass every make test (and so CI) ends with.
FUZZ_CI_SECONDS ?= 60
RUN_ARGS ?=

.PHONY: help deps build run test test-real-cluster test-fast fuzz chaos bench bench-operator manifests bundle deploy undeploy images passwd clean cluster-up cluster-down

# While `make cluster-up`'s local cluster is up, its settings (KUBECONFIG, REGISTRY, ...) are the defaults.
-include .cluster/env
# Where images are pushed and what they are tagged: `make images` bakes them into the operator image
# (its default broker image) and `make deploy` points the Deployment at them.
REGISTRY ?= docker.io/tbmq
VERSION ?= 0.1.0
# Default Redis image of TbmqClusters that name none (empty: the operator's own default, redis:7.2).
REDIS_IMAGE ?=
export REGISTRY VERSION

help: ## this list
	@grep -E '^[a-z-]+:.*## ' Makefile | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

deps: ## install the Debian packages the stack and the tests need (redis, mosquitto, openssl)
	@scripts/ensure-deps.sh

build: deps ## build every module (no tests)
	@$(ENV) $(MVN) -q -DskipTests install

run: build ## start Kafka, Redis and the broker on 1883 and print how to connect; Ctrl-C stops all
	@$(ENV) java -cp "local-stack/target/classes:$$(cat local-stack/target/launcher.classpath)" \
		io.tbmq.localstack.LocalStackMain --dir .run --nodes $(NODES) $(RUN_ARGS)

test: deps ## everything CI runs: unit (*Test), integration (*IT) and end-to-end (*E2E) tests, then a short fuzzing pass
	@$(ENV) $(MVN) install
	@$(ENV) scripts/fuzz.sh $(FUZZ_CI_SECONDS)

test-real-cluster: build ## RealClusterFaultsE2E alone, held to its 5 s scale-pause target: scale edits and pod deletions under traffic on the local real cluster
	@$(ENV) $(MVN) -pl e2e verify -Dit.test=RealClusterFaultsE2E -Dtbmq.e2e.scale-pause-limit-ms=5000 -Dsurefire.failIfNoSpecifiedTests=false

test-fast: ## unit tests only (*Test), no servers
	@$(ENV) $(MVN) -DskipITs install

fuzz: build ## coverage-guided fuzzing of the decoder and packet handlers for FUZZ_SECONDS (default 300)
	@$(ENV) scripts/fuzz.sh $(FUZZ_SECONDS)

chaos: deps ## fault suites with continuous clients (nodes killed and restarted, Redis and Kafka stopped 30 s, reconnect storm, overload); figures in docs/reliability.md
	@$(ENV) $(MVN) -q -pl local-stack -am install -DskipTests
	@$(ENV) $(MVN) -pl broker verify -Dtest=None -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='ClusterFaultsIT,FaultSuiteIT,RecoveryIT,ClusterRecoveryIT,HostileClientsIT' \
		-Dtbmq.chaos=true -Dtbmq.chaos.outage-seconds=30

bench: build ## benchmarks against mosquitto on this machine, then the operator's; results in docs/benchmarks.md
	@$(ENV) scripts/bench.sh
	@$(MAKE) --no-print-directory bench-operator

bench-operator: build ## the operator with 1 and 20 TbmqClusters on the e2e control plane (docs/benchmarks.md)
	@$(ENV) $(MVN) -pl e2e verify -Dit.test=OperatorBench -Dsurefire.failIfNoSpecifiedTests=false

manifests: ## regenerate crds/, config/install/, bundle/ and the operator's catalog of broker settings from the code (a test fails when they drift)
	@$(ENV) $(MVN) -q -pl broker -am test -Dtest=SettingsCatalogTest -Dsurefire.failIfNoSpecifiedTests=false -Dtbmq.update-manifests=true
	@$(ENV) $(MVN) -q -pl operator -am install -DskipTests
	@$(ENV) $(MVN) -pl operator verify -Dtest=None -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ManifestsIT \
		-Dtbmq.update-manifests=true

bundle: manifests ## the OLM bundle in bundle/ (quarkus-operator-sdk's generator plus samples and descriptors)

KUBECTL ?= $(shell command -v kubectl || echo $(HOME)/.cache/tbmq-k8s/bin/kubectl)

deploy: ## install the CRD and the operator (namespace tbmq-system) into $KUBECONFIG's cluster (or the local one of make cluster-up)
	$(if $(KUBECONFIG),KUBECONFIG=$(KUBECONFIG)) $(KUBECTL) apply --server-side -f crds/
	sed -e 's#image: docker.io/tbmq/tbmq-operator:0.1.0#image: $(REGISTRY)/tbmq-operator:$(VERSION)#' \
	    $(if $(REDIS_IMAGE),-e 's#value: redis:7.2#value: $(REDIS_IMAGE)#') config/install/operator.yaml \
	  | $(if $(KUBECONFIG),KUBECONFIG=$(KUBECONFIG)) $(KUBECTL) apply --server-side -f -

undeploy: ## remove the operator and the CRD (and with it every TbmqCluster) from the current cluster
	$(if $(KUBECONFIG),KUBECONFIG=$(KUBECONFIG)) $(KUBECTL) delete --ignore-not-found -f config/install/ -f crds/

cluster-up: deps ## a real one-node Kubernetes on this machine with the project's images, CRDs and a Strimzi stand-in; prints export KUBECONFIG=... last
	@$(ENV) scripts/cluster.sh up

cluster-down: ## stop exactly what cluster-up started and restore the host (mounts, iptables, sysctls)
	@$(ENV) scripts/cluster.sh down

images: build ## broker, operator and OLM bundle images as OCI archives in target/images/ (no Docker: jlink + umoci); REGISTRY=... VERSION=...
	@$(ENV) scripts/images.sh

passwd: build ## hash a password for a credentials file (reads it from stdin)
	@$(ENV) java -jar broker/target/quarkus-app/quarkus-run.jar hash-password

clean: ## remove build output and the run directory
	@$(ENV) $(MVN) -q clean
	rm -rf .run
