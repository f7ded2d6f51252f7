package io.tbmq.operator.desired;

import java.util.Map;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;

/** Spreads a component's pods over nodes when it can (preferred, so a small cluster still schedules). */
final class PodPlacement {
    private PodPlacement() {
    }

    static Affinity spreadAcrossNodes(Map<String, String> selector) {
        return new AffinityBuilder()
                .withNewPodAntiAffinity()
                    .addNewPreferredDuringSchedulingIgnoredDuringExecution()
                        .withWeight(100)
                        .withNewPodAffinityTerm()
                            .withTopologyKey("kubernetes.io/hostname")
                            .withNewLabelSelector().withMatchLabels(selector).endLabelSelector()
                        .endPodAffinityTerm()
                    .endPreferredDuringSchedulingIgnoredDuringExecution()
                .endPodAntiAffinity()
                .build();
    }
}
