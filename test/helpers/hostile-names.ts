/** Domain names and hostnames that would run `touch <canary>` if any parser took them as code. */
export function hostileNames(c: string): string[] {
  return [
    `$(touch ${c})`,
    `\`touch ${c}\``,
    `dom; touch ${c}`,
    `dom | touch ${c}`,
    `dom && touch ${c} #`,
    `dom\ntouch ${c}`,
    `dom' ; touch ${c}; echo '`,
    `dom" ; touch ${c}; echo "`,
    `'$(touch ${c})'`,
    `-c touch ${c}`,
    `--connect=x; touch ${c}`,
    `dom\\'; touch ${c}`,
    `dom$IFS;touch$IFS${c}`,
    `d\u043Em-look-alike; touch ${c}`,
    `${'x'.repeat(3000)}; touch ${c}`,
    `dom\u202E; touch ${c}`,
    `dom\r\ntouch ${c}`,
    `dom\t; touch ${c}`,
  ];
}
