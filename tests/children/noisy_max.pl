#!/usr/bin/env perl
# Report noisy max (Laplace 2/epsilon, epsilon = 1) as a child mechanism for `dpaudit audit
# --command`: one JSON request per line on stdin, one JSON answer per line on stdout.
# Arguments: the Laplace scale (default 2; 1 is the broken "half noise" variant), and
# "value" to also release the noisy maximum (answers carry "values": DP-Sniper's broken RNM).
use strict;
use warnings;
use JSON::PP;

my $scale = @ARGV ? $ARGV[0] : 2;
my $with_value = @ARGV > 1 && $ARGV[1] eq "value";
my $json = JSON::PP->new->canonical;
$| = 1;
while (my $line = <STDIN>) {
    my $request = $json->decode($line);
    srand($request->{seed} % 4294967296);
    my @counts = @{ $request->{counts} };
    my (@outcomes, @values);
    for (1 .. $request->{size}) {
        my ($best, $arg) = (-1e300, 0);
        for my $i (0 .. $#counts) {
            my $u = rand() - 0.5;
            my $noise = -$scale * ($u < 0 ? -1 : 1) * log(1 - 2 * abs($u));
            if ($counts[$i] + $noise > $best) { ($best, $arg) = ($counts[$i] + $noise, $i); }
        }
        push @outcomes, [$arg];
        push @values, [$best];
    }
    my %answer = (outcomes => \@outcomes);
    $answer{values} = \@values if $with_value;
    print $json->encode(\%answer), "\n";
}
