package io.tbmq.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * An MQTT user of one TbmqCluster: its authentication (a password the operator generates into a
 * Secret, or an X.509 common name), its client type and its ACL. The brokers apply a change
 * without a restart; clients of a removed user or of a narrowed ACL are disconnected (reason 0x87).
 */
@Group("tbmq.io")
@Version("v1alpha1")
@Kind("TbmqUser")
@Plural("tbmqusers")
@ShortNames("tbmqu")
@AdditionalPrinterColumn(name = "Cluster", jsonPath = ".spec.cluster", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Authentication", jsonPath = ".spec.authentication.type", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class TbmqUser extends CustomResource<TbmqUserSpec, TbmqUserStatus> implements Namespaced {

    /** The MQTT user name (password users) or the certificate's common name (TLS users). */
    public String principal() {
        TbmqUserSpec.Authentication auth = getSpec() == null ? null : getSpec().getAuthentication();
        if (auth != null && auth.getType() == TbmqUserSpec.AuthenticationType.TLS && auth.getCommonName() != null
                && !auth.getCommonName().isBlank()) {
            return auth.getCommonName();
        }
        return getMetadata().getName();
    }

    @Override
    protected TbmqUserStatus initStatus() {
        return new TbmqUserStatus();
    }
}
