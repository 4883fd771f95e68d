/* inlineasm.S - one assembler function under two names (assembled with -g,
 * so gas gives each name its own DWARF subprogram): perf 6.1 names the
 * code by the later one, inl_spin_b. Spins n times (x86-64; the test
 * builds it only there). */
	.text
	.globl	inl_spin_a
	.type	inl_spin_a, @function
	.globl	inl_spin_b
	.type	inl_spin_b, @function
inl_spin_a:
inl_spin_b:
	.cfi_startproc
1:	test	%rdi, %rdi
	jz	2f
	dec	%rdi
	jmp	1b
2:	ret
	.cfi_endproc
	.size	inl_spin_a, .-inl_spin_a
	.size	inl_spin_b, .-inl_spin_b
	.section	.note.GNU-stack,"",@progbits
