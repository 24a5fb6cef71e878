using System.Collections.Generic;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace System.Net.Quic.Managed.Tls;

/// <summary>
/// Peer certificate validation with SslStream semantics: X509Chain + host name check produce SslPolicyErrors; a
/// RemoteCertificateValidationCallback (sender is null) may override; otherwise any error fails with an alert
/// chosen from the chain status (RFC 8446 §6.2). A rejection is explained in SslStream's and System.Net.Quic's words
/// (<see cref="RejectedByCallback"/>, the chain status such as UntrustedRoot or NotTimeValid, or the policy errors).
/// </summary>
internal static class CertificateValidator
{
    private const string ServerAuthOid = "1.3.6.1.5.5.7.3.1";
    private const string ClientAuthOid = "1.3.6.1.5.5.7.3.2";

    /// <summary>What every rejection message starts with (the API reports such a local rejection as its message alone).</summary>
    public const string RejectionPrefix = "The remote certificate ";

    /// <summary>A RemoteCertificateValidationCallback returned false (msquic's and SslStream's message).</summary>
    public const string RejectedByCallback = RejectionPrefix + "was rejected by the provided RemoteCertificateValidationCallback.";

    /// <summary>
    /// Returns null if accepted, else the alert to send, with <paramref name="rejection"/> saying why (null when accepted).
    /// </summary>
    public static TlsAlert? Validate(X509Certificate2? leaf, List<X509Certificate2> intermediates, bool peerIsServer, TlsHandshakeOptions options,
        out SslPolicyErrors errors, out string? rejection)
    {
        errors = SslPolicyErrors.None;
        rejection = null;
        if (leaf == null)
        {
            errors = SslPolicyErrors.RemoteCertificateNotAvailable;
            if (options.RemoteCertificateValidation != null)
            {
                if (options.RemoteCertificateValidation(null!, null, null, errors)) return null;
                rejection = RejectedByCallback;
            }
            else
            {
                rejection = RejectionMessage(errors, X509ChainStatusFlags.NoError);
            }
            return peerIsServer ? TlsAlert.DecodeError : TlsAlert.CertificateRequired;
        }

        using var chain = new X509Chain();
        X509ChainPolicy policy = options.CertificateChainPolicy?.Clone() ?? new X509ChainPolicy { RevocationMode = X509RevocationMode.NoCheck };
        policy.DisableCertificateDownloads = true;
        if (policy.ApplicationPolicy.Count == 0) policy.ApplicationPolicy.Add(new Oid(peerIsServer ? ServerAuthOid : ClientAuthOid));
        foreach (X509Certificate2 c in intermediates) policy.ExtraStore.Add(c);
        chain.ChainPolicy = policy;

        bool chainOk;
        try
        {
            chainOk = chain.Build(leaf);
        }
        catch (CryptographicException)
        {
            chainOk = false;
        }
        X509ChainStatusFlags flags = X509ChainStatusFlags.NoError;
        if (!chainOk)
        {
            errors |= SslPolicyErrors.RemoteCertificateChainErrors;
            foreach (X509ChainStatus s in chain.ChainStatus) flags |= s.Status;
            if (flags == X509ChainStatusFlags.NoError) flags = X509ChainStatusFlags.PartialChain;
        }

        if (peerIsServer && !string.IsNullOrEmpty(options.ServerName))
        {
            bool nameOk;
            try
            {
                nameOk = leaf.MatchesHostname(options.ServerName!);
            }
            catch (ArgumentException)
            {
                nameOk = false;
            }
            if (!nameOk) errors |= SslPolicyErrors.RemoteCertificateNameMismatch;
        }

        if (options.RemoteCertificateValidation != null)
        {
            if (options.RemoteCertificateValidation(null!, leaf, chain, errors)) return null;
            rejection = RejectedByCallback;
            return errors == SslPolicyErrors.None ? TlsAlert.BadCertificate : MapErrors(errors, flags);
        }
        if (errors == SslPolicyErrors.None) return null;
        rejection = RejectionMessage(errors, flags);
        return MapErrors(errors, flags);
    }

    /// <summary>
    /// SslStream's words for a rejection without a callback: only chain errors name the chain status
    /// ("... errors in the certificate chain: UntrustedRoot"), anything else names the policy errors.
    /// </summary>
    public static string RejectionMessage(SslPolicyErrors errors, X509ChainStatusFlags chainStatus)
        => errors == SslPolicyErrors.RemoteCertificateChainErrors && chainStatus != X509ChainStatusFlags.NoError
            ? $"{RejectionPrefix}is invalid because of errors in the certificate chain: {chainStatus}"
            : $"{RejectionPrefix}is invalid according to the validation procedure: {errors}";

    private static TlsAlert MapErrors(SslPolicyErrors errors, X509ChainStatusFlags flags)
    {
        if ((errors & SslPolicyErrors.RemoteCertificateChainErrors) != 0)
        {
            if ((flags & (X509ChainStatusFlags.NotTimeValid | X509ChainStatusFlags.CtlNotTimeValid)) != 0) return TlsAlert.CertificateExpired;
            if ((flags & X509ChainStatusFlags.Revoked) != 0) return TlsAlert.CertificateRevoked;
            if ((flags & (X509ChainStatusFlags.UntrustedRoot | X509ChainStatusFlags.PartialChain)) != 0) return TlsAlert.UnknownCa;
            return TlsAlert.BadCertificate;
        }
        return TlsAlert.BadCertificate;
    }
}
