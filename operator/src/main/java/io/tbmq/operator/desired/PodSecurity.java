package io.tbmq.operator.desired;

import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;

/**
 * What the restricted Pod Security Standard asks of every pod the operator writes: a non-root
 * user, no privilege escalation, no capabilities, the runtime's default seccomp profile, and a
 * read-only root filesystem (the processes write only to their volumes).
 */
final class PodSecurity {
    private PodSecurity() {
    }

    /** Pod level; {@code uid} also owns the volumes (fsGroup). */
    static PodSecurityContext pod(long uid) {
        return new PodSecurityContextBuilder()
                .withRunAsNonRoot(true)
                .withRunAsUser(uid)
                .withRunAsGroup(uid)
                .withFsGroup(uid)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .build();
    }

    static SecurityContext container() {
        return new SecurityContextBuilder()
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withNewCapabilities().addToDrop("ALL").endCapabilities()
                .build();
    }
}
