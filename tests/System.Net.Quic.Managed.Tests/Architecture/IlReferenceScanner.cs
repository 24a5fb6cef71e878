using System.Reflection;
using System.Reflection.Emit;

namespace System.Net.Quic.Managed.Tests.Architecture;

/// <summary>
/// Lists the members and types a type refers to: its signatures (fields, parameters, returns, base types)
/// and every token in its method bodies' IL. Used to keep the sans-IO core free of sockets, clocks and threads.
/// </summary>
internal static class IlReferenceScanner
{
    private static readonly Dictionary<short, OpCode> s_opCodes = LoadOpCodes();

    private static Dictionary<short, OpCode> LoadOpCodes()
    {
        var map = new Dictionary<short, OpCode>();
        foreach (FieldInfo f in typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static))
        {
            if (f.GetValue(null) is OpCode op) map[op.Value] = op;
        }
        return map;
    }

    private const BindingFlags All = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    /// <summary>Yields a description ("Type" or "Type::Member") of everything <paramref name="type"/> refers to.</summary>
    public static IEnumerable<(string Where, MemberInfo Target)> References(Type type)
    {
        if (type.BaseType is not null) yield return (type.FullName + " base", type.BaseType);
        foreach (Type i in type.GetInterfaces()) yield return (type.FullName + " implements", i);
        foreach (FieldInfo f in type.GetFields(All)) yield return ($"{type.FullName}.{f.Name}", f.FieldType);

        foreach (MethodBase m in type.GetMethods(All).Cast<MethodBase>().Concat(type.GetConstructors(All)))
        {
            string where = $"{type.FullName}::{m.Name}";
            if (m is MethodInfo mi) yield return (where + " returns", mi.ReturnType);
            foreach (ParameterInfo p in m.GetParameters()) yield return (where + " parameter", p.ParameterType);
            MethodBody? body;
            try { body = m.GetMethodBody(); } catch (Exception) { continue; }
            if (body is null) continue;
            foreach (LocalVariableInfo l in body.LocalVariables) yield return (where + " local", l.LocalType);
            byte[]? il = body.GetILAsByteArray();
            if (il is null) continue;
            foreach (MemberInfo target in TokensIn(m, il)) yield return (where, target);
        }
    }

    private static IEnumerable<MemberInfo> TokensIn(MethodBase method, byte[] il)
    {
        Module module = method.Module;
        Type[]? typeArgs = method.DeclaringType is { IsGenericType: true } dt ? dt.GetGenericArguments() : null;
        Type[]? methodArgs = method.IsGenericMethod ? method.GetGenericArguments() : null;
        int pos = 0;
        while (pos < il.Length)
        {
            short value = il[pos++];
            if (value == 0xFE) value = (short)(0xFE00 | il[pos++]);
            if (!s_opCodes.TryGetValue(value, out OpCode op)) yield break; // unknown opcode: stop rather than misparse
            int operandSize = op.OperandType switch
            {
                OperandType.InlineNone => 0,
                OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
                OperandType.InlineVar => 2,
                OperandType.InlineI8 or OperandType.InlineR => 8,
                OperandType.InlineSwitch => 4 + 4 * BitConverter.ToInt32(il, pos),
                _ => 4,
            };
            if (op.OperandType is OperandType.InlineMethod or OperandType.InlineField or OperandType.InlineType or OperandType.InlineTok)
            {
                int token = BitConverter.ToInt32(il, pos);
                MemberInfo? resolved = null;
                try { resolved = module.ResolveMember(token, typeArgs, methodArgs); } catch (Exception) { }
                if (resolved is not null) yield return resolved;
            }
            pos += operandSize;
        }
    }
}
